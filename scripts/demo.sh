#!/usr/bin/env bash
# demo.sh PTM OUTDIR: the main job, step by step (called by `make demo`).
#
# Train a PTM on Iris, generate its Verilog core, synthesize it for the
# iCEBreaker (iCE40 UP5K), start the Verilated board on a pseudo-terminal,
# stream the held-out rows through the Go host driver with K=100, and
# report what came back.
set -euo pipefail
ptm=${1:-build/ptm}
out=${2:-build/demo}
# Hardware configuration shared by generation, synthesis and the board.
BITS=${BITS:-8}
LANES=${LANES:-12}
DEVICE=${DEVICE:-up5k}
K=${K:-100}
mkdir -p "$out"

step() { printf '\n==> %s\n' "$*"; }
board_pid=""
cleanup() { if [ -n "$board_pid" ]; then kill "$board_pid" 2>/dev/null || true; wait "$board_pid" 2>/dev/null || true; fi; }
trap cleanup EXIT

step "1/6 Train a PTM on Iris (80/20 stratified split; booleanizer fitted on the training rows only)"
"$ptm" train --data iris --seed 1 -o "$out/iris.ptm"

step "2/6 Evaluate the float model on the held-out rows with K=$K samples per query"
"$ptm" eval --model "$out/iris.ptm" --data iris --split test --samples "$K" --json > "$out/golden-eval.json"
"$ptm" eval --model "$out/iris.ptm" --data iris --split test --samples "$K"

step "3/6 Generate the Verilog inference core (B=$BITS bits, $LANES lanes)"
"$ptm" gen --model "$out/iris.ptm" --bits "$BITS" --lanes "$LANES" --out "$out/rtl"

step "4/6 Synthesize for the iCEBreaker ($DEVICE, UART-only board): yosys, nextpnr-ice40, icepack"
# --close retries at a clock the placed design meets, so the bitstream is usable; the report says which.
"$ptm" synth --model "$out/iris.ptm" --device "$DEVICE" --bits "$BITS" --lanes "$LANES" --no-eth --close \
  --out "$out/synth" --json > "$out/synth.json" || echo "(ptm synth reported a problem: see above and $out/synth)"
synth_ok=0
if grep -q '"bitstream": "[^"]' "$out/synth.json" 2>/dev/null; then synth_ok=1; fi

step "5/6 Start the Verilated board (UART bridged bit by bit to a pseudo-terminal)"
"$ptm" board --model "$out/iris.ptm" --bits "$BITS" --lanes "$LANES" > "$out/board.out" 2> "$out/board.log" &
board_pid=$!
pty=""
for _ in $(seq 1 600); do
  pty=$(sed -n 's/^UART: //p' "$out/board.out" 2>/dev/null || true)
  [ -n "$pty" ] && break
  if ! kill -0 "$board_pid" 2>/dev/null; then cat "$out/board.log" >&2; exit 1; fi
  sleep 1
done
[ -n "$pty" ] || { echo "the board did not come up; log: $out/board.log" >&2; exit 1; }
echo "board up on $pty"

step "6/6 Stream the held-out rows through the host driver (upload, pipelined INFER, K=$K, per-sample results)"
"$ptm" stream --uart "$pty" --model "$out/iris.ptm" --data iris --split test --samples "$K" --mode samples \
  --json --out "$out/stream-full.json" > "$out/stream.json"

printf '\n==================== PTM on hardware: report ====================\n'
synth_arg=()
if [ "$synth_ok" = 1 ]; then synth_arg=(--synth "$out/synth.json"); fi
"$ptm" report --eval "$out/golden-eval.json" --stream "$out/stream.json" "${synth_arg[@]}"
printf '\nGenerated RTL:       %s\n' "$out/rtl"
if [ "$synth_ok" = 1 ]; then printf 'Bitstream:           %s (program an iCEBreaker: iceprog %s)\n' "$out/synth/top.bin" "$out/synth/top.bin"; fi
printf 'Model file:          %s\n' "$out/iris.ptm"
printf 'Per-query results:   %s\n' "$out/stream-full.json"
printf 'Figures and report:  docs/results/ (ptm experiments --out DIR regenerates them)\n'
