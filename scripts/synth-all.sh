#!/usr/bin/env bash
# synth-all.sh: the design-space sweep of docs/synthesis.md (make synth-all).
#
#   scripts/synth-all.sh [PTM] [OUT]
#
# Trains the Iris and noisy-XOR models, runs `ptm synth --json` for each
# configuration below (two at a time), appends every result (or the
# failure: no fit, timing, with its reason) to OUT/sweep.jsonl and writes
# the Markdown table to OUT/table.md. Takes about an hour on 2 cores.
# JOBS=N runs N configurations at a time; ONLY=regex keeps matching lines;
# SEED=S sets nextpnr's seed (1); RESUME=1 keeps results already there;
# The Verilog is the copy embedded in PTM (package rtl): to synthesize
# another commit, build PTM from that commit.
set -euo pipefail

PTM=${1:-build/ptm}
OUT=${2:-build/synth}
JOBS=${JOBS:-2}
mkdir -p "$OUT"
[ -x "$PTM" ] || go build -o "$PTM" ./cmd/ptm

IRIS=$OUT/iris.ptm
XOR=$OUT/xor.ptm
[ -f "$IRIS" ] || "$PTM" train --data iris --seed 1 --no-tune -o "$IRIS" >/dev/null
[ -f "$XOR" ] || "$PTM" train --data xor-classic --clauses 10 --T 15 --s 3.9 --epochs 40 --seed 3 --no-tune -o "$XOR" >/dev/null

# model device top(core|board|uart) lanes bits lfsr-width clock-MHz
CONFIGS="
iris up5k core 16 8 16 48
iris up5k core 30 8 16 48
iris up5k core 48 8 16 48
iris up5k core 60 8 16 48
iris up5k core 30 16 24 48
iris up5k core 30 8 32 48
iris up5k board 4 8 16 48
iris up5k uart 8 8 16 48
iris up5k uart 16 8 16 48
iris hx8k core 32 8 16 48
iris hx8k core 64 8 16 48
iris hx8k core 64 8 16 96
iris hx8k core 32 16 24 48
iris hx8k board 16 8 16 48
iris hx8k board 32 8 16 48
xor up5k core 2 8 16 48
xor up5k core 8 8 16 48
xor up5k core 24 8 16 48
xor up5k core 40 8 16 48
xor up5k core 8 12 24 48
xor up5k board 2 8 16 48
xor up5k uart 8 8 16 48
xor hx8k core 40 8 16 48
xor hx8k board 2 8 16 48
xor hx8k board 8 8 16 48
xor hx8k board 24 8 16 48
"

run() {
  local model=$1 dev=$2 top=$3 lanes=$4 bits=$5 w=$6 mhz=$7
  local m=$IRIS; [ "$model" = xor ] && m=$XOR
  local flags=()
  [ "$top" = core ] && flags+=(--core-only)
  [ "$top" = uart ] && flags+=(--no-eth)
  local name="$model-$dev-$top-L$lanes-B$bits-W$w-${mhz}MHz"
  if [ -n "${RESUME:-}" ] && [ -s "$OUT/$name.json" ] && ! grep -q '"error"' "$OUT/$name.json"; then
    echo "synth-all: $name: kept"; return
  fi
  "$PTM" synth --model "$m" --device "$dev" --lanes "$lanes" --bits "$bits" --lfsr-width "$w" \
    --freq "$mhz" --seed "${SEED:-1}" "${flags[@]}" --out "$OUT/$name" --json --quiet \
    > "$OUT/$name.json" 2> "$OUT/$name.err" || true
  local msg; msg=$(tail -n 1 "$OUT/$name.err" 2>/dev/null || true)
  echo "synth-all: $name: ${msg:-ok}"
}
export -f run
export PTM OUT IRIS XOR RESUME SEED

echo "$CONFIGS" | grep -v '^$' | grep -E "${ONLY:-.}" | xargs -P "$JOBS" -L 1 bash -c 'run "$@"' _
echo "$CONFIGS" | grep -v '^$' | grep -E "${ONLY:-.}" | while read -r model dev top lanes bits w mhz; do
  cat "$OUT/$model-$dev-$top-L$lanes-B$bits-W$w-${mhz}MHz.json"
done > "$OUT/sweep.jsonl"
"$PTM" synth --table "$OUT/sweep.jsonl" | tee "$OUT/table.md"
