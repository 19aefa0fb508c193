#!/usr/bin/env bash
# demo.sh PTM OUTDIR: the main job, step by step (called by `make demo`).
#
# Train a PTM on Iris, build the image a user flashes on the iCEBreaker
# (iCE40 UP5K, UART-only board) once, with the largest core that fits and
# meets timing (`ptm synth` without a lane count; docs/synthesis.md), run
# the Verilated board of that exact image (same core, same clock's UART
# divider) on a pseudo-terminal, stream the held-out rows through the Go
# host driver with K=100, and save OUTDIR/report.md with its figures.
#
# Every step prints its elapsed time; yosys and nextpnr print a line at
# least every 20 s, the board build every 20 s. Results of `ptm synth`
# are cached (~/.cache/ptm-synth, $PTM_SYNTH_CACHE), Verilator builds too,
# so a second run reuses them.
set -euo pipefail
# shellcheck source=lib/steps.sh
. "$(dirname "$0")/lib/steps.sh"
ptm=${1:-build/ptm}
out=${2:-build/demo}
BITS=${BITS:-4}
W=${W:-16}
DEVICE=${DEVICE:-up5k}
# The image's size, clocks and placement seed, chosen by place and route
# for this model so that the demo places and routes once. With B = 4
# thresholds (four lanes per block RAM) and 16-bit LFSRs, the defaults of
# `ptm synth` (docs/fixed-point.md 2.3), and the dual-clock board
# (RATIO=2: the core on the PLL's 54 MHz, the board shell on half of it,
# the UART at 3 Mbaud from 27 MHz, 9 clocks per bit; docs/board-shell.md),
# 60 lanes (5 x 12, 48.87 clocks per sample) place in the UP5K (4,161 of
# 5,280 logic cells) and meet both clocks with nextpnr seed 1 (core Fmax
# 54.41 MHz, shell 33.86): 1.10 M samples/s at the 54 MHz clock.
# RATIO=1 LANES=28 FREQ=27 SEED=1 builds a single-clock image. LANES=auto
# runs `ptm synth`'s own search (docs/howto-build-image.md).
RATIO=${RATIO:-2}
LANES=${LANES:-60}
FREQ=${FREQ:-54}
SEED=${SEED:-1}
K=${K:-100}
mkdir -p "$out"
steps_init "$out"

# json FILE KEY: a top-level number or string of a JSON object.
json() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(v if not isinstance(v, float) or v != int(v) else int(v))' "$1" "$2"; }

step "1/6 Train a PTM on Iris (80/20 stratified split; booleanizer fitted on the training rows only)"
# --no-tune: the image of step 3 (its lanes, cells and clocks, and the
# synthesis cache) is sized for this model, 3 x 20 clauses at T 10, s 2;
# without it ptm train would choose the model by cross-validation
# (about 20 s of CPU on Iris) and the image would change with the choice.
"$ptm" train --data iris --seed 4 --no-tune -o "$out/iris.ptm"

step "2/6 Evaluate the float model on the held-out rows with K=$K samples per query"
"$ptm" eval --model "$out/iris.ptm" --data iris --split test --samples "$K" --json > "$out/golden-eval.json"
"$ptm" eval --model "$out/iris.ptm" --data iris --split test --samples "$K"

clocks="$FREQ MHz"
if [ "$RATIO" = 2 ]; then clocks="a $FREQ MHz core clock, the shell at half"; fi
step "3/6 Build the image for the iCEBreaker ($DEVICE, UART only, $LANES lanes at $clocks: the largest core that fits and meets timing)"
# One ptm synth, one place and route at the size and clock above (with
# LANES=auto it searches the lane count: yosys estimates, then place and
# route); a timing failure is an error and leaves no bitstream.
size=(--lanes "$LANES" --freq "$FREQ")
if [ "$LANES" = auto ]; then size=(); fi
"$ptm" synth --model "$out/iris.ptm" --device "$DEVICE" --bits "$BITS" --lfsr-width "$W" --no-eth --core-clock-ratio "$RATIO" --seed "$SEED" "${size[@]}" \
  --out "$out/synth" --json > "$out/synth.json"
lc=$(json "$out/synth.json" clause_lanes)
ll=$(json "$out/synth.json" literal_lanes)
cpb=$(json "$out/synth.json" clks_per_bit)
baud=$(json "$out/synth.json" uart_baud)
mhz=$(json "$out/synth.json" clock_mhz)
# the board shell's clock (the UART's and CLK_HZ): half the core's with RATIO=2
shell_mhz=$mhz
if [ "$RATIO" = 2 ]; then shell_mhz=$(json "$out/synth.json" shell_clock_mhz); fi
lanes=$(json "$out/synth.json" lanes)
echo "image: $lanes lanes ($lc x $ll), B=$BITS, W=$W, core $mhz MHz, shell $shell_mhz MHz, UART $baud baud ($cpb clocks per bit): $out/synth/top.bin"

step "4/6 Generate the image's Verilog core for reading ($lanes lanes)"
"$ptm" gen --model "$out/iris.ptm" --bits "$BITS" --lfsr-width "$W" --clause-lanes "$lc" --literal-lanes "$ll" --out "$out/rtl"

step "5/6 Start the Verilated board of that image (UART only, $cpb clocks per bit; UART bridged bit by bit to a pseudo-terminal)"
rm -f "$out/board.out" "$out/board.log" # a pty line left by an earlier run must not be read
"${with_parent[@]}" "$ptm" board --model "$out/iris.ptm" --bits "$BITS" --lfsr-width "$W" --clause-lanes "$lc" --literal-lanes "$ll" --preload \
  --no-eth --core-clock-ratio "$RATIO" --clock-hz "$(awk -v m="$shell_mhz" 'BEGIN { printf "%d", m * 1e6 + 0.5 }')" --clks-per-bit "$cpb" --baud "$baud" > "$out/board.out" 2> "$out/board.log" &
board_pid=$!
pty=""
waited=0
while [ -z "$pty" ]; do
  pty=$(sed -n 's/^UART: //p' "$out/board.out" 2>/dev/null || true)
  [ -n "$pty" ] && break
  if ! kill -0 "$board_pid" 2>/dev/null; then cat "$out/board.log" >&2; exit 1; fi
  if [ "$waited" -ge 1200 ]; then echo "the board did not come up in 20 minutes; log: $out/board.log" >&2; exit 1; fi
  sleep 1
  waited=$((waited + 1))
  if [ $((waited % 20)) = 0 ]; then echo "board: Verilator build still running (${waited} s; cached after the first build)"; fi
done
echo "board up on $pty"

step "6/6 Stream the held-out rows through the host driver (upload, pipelined INFER, K=$K, per-sample results)"
"$ptm" stream --uart "$pty@$baud" --model "$out/iris.ptm" --data iris --split test --samples "$K" --mode sums \
  --json --out "$out/stream-full.json" > "$out/stream.json"
finish_step

printf '\n==================== PTM on hardware: report ====================\n'
"$ptm" report --eval "$out/golden-eval.json" --stream "$out/stream.json" --synth "$out/synth.json" \
  --md "$out/report.md" --rows "$out/stream-full.json" --steps "$steps"
printf '\nGenerated RTL:       %s\n' "$out/rtl"
printf 'Bitstream:           %s (program an iCEBreaker: iceprog %s)\n' "$out/synth/top.bin" "$out/synth/top.bin"
printf 'Real board:          %s stream --uart /dev/ttyUSB1@%s --model %s --data iris\n' "$ptm" "$baud" "$out/iris.ptm"
printf 'Model file:          %s\n' "$out/iris.ptm"
printf 'Per-query results:   %s\n' "$out/stream-full.json"
printf 'Report and figures:  %s (reliability.png, entropy.png)\n' "$out/report.md"
printf 'Total:               %s s\n' "$(elapsed "$demo_start")"
