# steps.sh: the demos' step timer, sourced by scripts/demo.sh and
# scripts/demo-images.sh (not run on its own).
#
#   steps_init OUTDIR   start the clock; steps go to OUTDIR/steps.tsv
#   step TEXT           end the running step (its time printed and logged)
#                       and start the next, printing the time since start
#   step_rename TEXT    name the running step TEXT in steps.tsv (when what
#                       it does is decided after it started), printing TEXT
#   finish_step         end the running step
#   elapsed START       seconds since START (date +%s.%N), one decimal
#
# board_pid, if set, is a Verilated board's process: it is stopped when
# the sourcing script exits. A script killed with SIGKILL runs no trap,
# so boards are started as "${with_parent[@]}" "$ptm" board ...:
# setpriv --pdeathsig TERM (util-linux) has the kernel send the board
# SIGTERM when the script dies, and `ptm board` stops its simulator on
# SIGTERM.

elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

steps_init() {
  steps="$1/steps.tsv"
  : > "$steps"
  demo_start=$(date +%s.%N)
  step_start=$demo_start
  step_name=""
}

finish_step() {
  if [ -n "$step_name" ]; then
    local s; s=$(elapsed "$step_start")
    printf '    (%s s)\n' "$s"
    printf '%s\t%s\n' "$s" "$step_name" >> "$steps"
  fi
  step_name=""
}

step() {
  finish_step
  step_name="$*"
  step_start=$(date +%s.%N)
  printf '\n==> [%s s] %s\n' "$(elapsed "$demo_start")" "$*"
}

step_rename() {
  step_name="$*"
  printf '    %s\n' "$*"
}

with_parent=()
if command -v setpriv > /dev/null 2>&1 && setpriv --help 2>&1 | grep -q -- --pdeathsig; then
  with_parent=(setpriv --pdeathsig TERM --)
fi

board_pid=""
stop_board() {
  if [ -n "$board_pid" ]; then
    kill "$board_pid" 2>/dev/null || true
    wait "$board_pid" 2>/dev/null || true
  fi
}
trap stop_board EXIT
