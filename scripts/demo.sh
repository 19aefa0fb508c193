#!/usr/bin/env bash
# demo.sh PTM OUTDIR: the main job, step by step (called by `make demo`).
set -euo pipefail
ptm=${1:-build/ptm}
out=${2:-build/demo}
mkdir -p "$out"

step() { printf '\n==> %s\n' "$*"; }

step "1/3 Train a PTM on Iris (80/20 stratified split, booleanizer fitted on the training rows only)"
"$ptm" train --data iris --seed 1 -o "$out/iris.ptm"

step "2/3 Evaluate on the held-out rows with K=100 samples per query"
"$ptm" eval --model "$out/iris.ptm" --data iris --split test --samples 100
"$ptm" eval --model "$out/iris.ptm" --data iris --split test --samples 100 --json > "$out/iris-eval.json"

step "3/3 What the model learned (the first clauses of the versicolor TM, literals with P(include) >= 0.9)"
"$ptm" inspect --model "$out/iris.ptm" --tm 1 --min 0.9 > "$out/iris-clauses.txt"
sed -n '1,9p' "$out/iris-clauses.txt" | cut -c1-160
echo "    ... (all clauses: $out/iris-clauses.txt)"

printf '\nModel: %s\nMetrics (JSON): %s\n' "$out/iris.ptm" "$out/iris-eval.json"
