#!/usr/bin/env bash
# synth.sh: build one iCE40 bitstream with yosys, nextpnr-ice40 and icepack
# (make synth). A thin wrapper of `ptm synth` (package hw/synth does
# the work: icepll, two-stage synth_ice40 with the bank pass, nextpnr with
# --pcf --freq --seed --report, icepack; all logs in the build folder).
#
#   scripts/synth.sh [PTM] [-- extra ptm synth flags]
#
# Environment (defaults: the Iris model's best UP5K configuration,
# docs/synthesis.md):
#   MODEL   model file (default: train Iris into build/synth/iris.ptm)
#   DEVICE  up5k | hx8k (up5k)       LANES  lane count (60)
#   BITS    threshold bits B (8)     W      LFSR width (16)
#   FREQ    target clock, MHz (48)   SEED   nextpnr seed (1)
#   CORE_ONLY  1: the core alone, 0: the full board top (1 on up5k: the
#              full board does not fit the UP5K with the Iris core)
#   CLOSE   1: if timing fails at FREQ, retry at the highest multiple of
#           3 MHz below the Fmax reached (ptm synth --close); 0: fail (1)
#   OUT     build folder (build/synth/<model>-<device>-...)
# Prints the JSON result; exits non-zero on any failure (no fit, timing,
# missing tool: run scripts/install-deps.sh).
set -euo pipefail

PTM=${1:-build/ptm}
shift || true
[ "${1:-}" = "--" ] && shift
[ -x "$PTM" ] || go build -o "$PTM" ./cmd/ptm

MODEL=${MODEL:-}
if [ -z "$MODEL" ]; then
  MODEL=build/synth/iris.ptm
  mkdir -p build/synth
  [ -f "$MODEL" ] || "$PTM" train --data iris --seed 1 --no-tune -o "$MODEL" >/dev/null
fi
DEVICE=${DEVICE:-up5k}
CORE_ONLY=${CORE_ONLY:-1}
flags=(--model "$MODEL" --device "$DEVICE" --lanes "${LANES:-60}" --bits "${BITS:-8}"
       --lfsr-width "${W:-16}" --freq "${FREQ:-48}" --seed "${SEED:-1}" --json)
[ "$CORE_ONLY" = 1 ] && flags+=(--core-only)
[ "${CLOSE:-1}" = 1 ] && flags+=(--close)
[ -n "${OUT:-}" ] && flags+=(--out "$OUT")
exec "$PTM" synth "${flags[@]}" "$@"
