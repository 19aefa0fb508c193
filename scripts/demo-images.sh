#!/usr/bin/env bash
# demo-images.sh PTM OUTDIR: the image demo, step by step (called by
# `make demo DATA=mnist` or DATA=fashion-mnist; docs/howto-demo-images.md).
#
# Train a convolutional PTM (or reuse one), evaluate the bit-exact
# fixed-point model on the test images that will be streamed (and on the
# out-of-distribution ones), say what the UP5K image step would do, start
# a board on a pseudo-terminal, stream N test images at K = 16 through
# the Go host driver with every answer checked against the golden model,
# then M images of the other data set as out-of-distribution queries
# through the same board, and save OUTDIR/report.md with its figures, all
# computed from the board's answers.
#
# Settings (environment, as make passes them):
#   DATA   mnist (default) or fashion-mnist; OOD the other one by default
#   MODEL  a trained model file to use instead of training (step 1)
#   RECIPE the training recipe, passed as `ptm train --recipe` (default:
#          the data set's own; mnist-up5k: the model the UP5K core runs);
#          it is part of the recorded --print-recipe line, so a changed
#          recipe retrains, and the model is kept as OUTDIR/RECIPE.ptm
#   QUICK  1: a tiny model (the first 3,000 training images, 32 clauses,
#          T 100, 1 epoch: seconds) and N=30, M=20, for tests
#   N, M   test images streamed (default 1000) and OOD images (default
#          500); N=all / M=all stream every test image
#   K      samples per query (default 16, the recipe's)
#   BOARD  soft (default): the software board, `ptm board --soft` (the
#          golden conv.Core behind the protocol-7 engine); sim: the
#          Verilated RTL board, `ptm board --model` (board_top KIND 1 with
#          conv_query and the generated core; the host uploads the model;
#          the 128-clause mnist-up5k model answers about 20 images per
#          second of simulation there)
#   LANES  BOARD=sim: the core's clause x literal lanes (default 1x16,
#          the UP5K image's configuration)
#   PATCHES BOARD=sim: patches per scan cycle (default: the UP5K image's,
#          from step 3's search when it ran with the same lanes, else 4)
#   W      BOARD=sim: LFSR width per lane (default 16, the UP5K's)
#   SCAN   BOARD=sim: the patch scan, range, full or compact (default:
#          the UP5K image's as PATCHES, else range)
#   COSIM  BOARD=sim: images co-simulated first on the same core
#          configuration (`ptm cosim`), for the core's cycles per sample
#          in the report (default 100; 0 skips it)
#   SYNTH  1: build the UP5K image of the model in step 3 (`ptm synth`'s
#          search: the fastest configuration that fits and meets timing,
#          a bitstream; 5-10 minutes on 2 cores, instant from its result
#          cache; the report then has the image's cells, clock and
#          samples/s, at the cycles `ptm cosim` measured when BOARD=sim
#          runs the same configuration); 0: skip it. Default 1 with
#          RECIPE=mnist-up5k, else 0 (the default MNIST model's board
#          does not fit the UP5K)
#   BAUD   the UART rate the board reports and paces (default 3000000,
#          the UP5K image's)
#
# Every step prints its elapsed time; the long ones print progress bars.
set -euo pipefail
# shellcheck source=lib/steps.sh
. "$(dirname "$0")/lib/steps.sh"
ptm=${1:-build/ptm}
out=${2:-build/demo-images}
DATA=${DATA:-mnist}
case "$DATA" in
  mnist) OOD=${OOD:-fashion-mnist} ;;
  fashion-mnist) OOD=${OOD:-mnist} ;;
  *) echo "demo-images.sh: DATA=$DATA: want mnist or fashion-mnist (DATA=iris runs scripts/demo.sh)" >&2; exit 2 ;;
esac
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
  N=${N:-30}
  M=${M:-20}
  recipe=(--train-rows 3000 --val-rows 300 --clauses 32 -T 100 --epochs 1)
  modelname="$DATA-quick.ptm"
else
  N=${N:-1000}
  M=${M:-500}
  recipe=()
  modelname="$DATA.ptm"
fi
RECIPE=${RECIPE:-}
if [ -n "$RECIPE" ]; then
  case "$RECIPE" in
    *[!a-z0-9-]* | -*) echo "demo-images.sh: RECIPE=$RECIPE: want a recipe name of ptm train --recipe (letters, digits and -)" >&2; exit 2 ;;
  esac
  recipe=(--recipe "$RECIPE" "${recipe[@]}")
  if [ "$QUICK" = 1 ]; then modelname="$RECIPE-quick.ptm"; else modelname="$RECIPE.ptm"; fi
fi
K=${K:-16}
BOARD=${BOARD:-soft}
if [ "$RECIPE" = mnist-up5k ]; then SYNTH=${SYNTH:-1}; else SYNTH=${SYNTH:-0}; fi
case "$SYNTH" in
  0 | 1) ;;
  *) echo "demo-images.sh: SYNTH=$SYNTH: want 1 (build the UP5K image) or 0" >&2; exit 2 ;;
esac
BAUD=${BAUD:-3000000}
MODEL=${MODEL:-}
limit() { if [ "$1" = all ]; then echo 0; else echo "$1"; fi; }
nl=$(limit "$N")
ml=$(limit "$M")
case "$nl$ml" in
  *[!0-9]*) echo "demo-images.sh: N=$N M=$M: want counts of images or all" >&2; exit 2 ;;
esac
case "$BOARD" in
  soft | sim) ;;
  *) echo "demo-images.sh: BOARD=$BOARD: want soft or sim" >&2; exit 2 ;;
esac
# The Verilated board's core configuration (BOARD=sim): by default the
# one the UP5K image of the mnist-up5k model holds (1 clause lane x 16
# literal lanes, 4 patches per cycle, LFSR width 16, range scan; step 3's
# search, when it runs, decides the patches and the scan), so the RTL
# that answers is the RTL the UP5K runs.
patches_given=${PATCHES:+1}
scan_given=${SCAN:+1}
LANES=${LANES:-1x16}
PATCHES=${PATCHES:-4}
W=${W:-16}
SCAN=${SCAN:-range}
COSIM=${COSIM:-100}
posint() { case "$1" in '' | *[!0-9]* | 0*) return 1 ;; esac; }
case "$LANES" in
  *x*) clanes=${LANES%%x*} llanes=${LANES#*x} ;;
  *) clanes="" llanes="" ;;
esac
if ! posint "$clanes" || ! posint "$llanes"; then
  echo "demo-images.sh: LANES=$LANES: want CLAUSExLITERAL lanes, two positive counts, e.g. 1x16" >&2; exit 2
fi
if ! posint "$PATCHES"; then echo "demo-images.sh: PATCHES=$PATCHES: want a positive count of patches per cycle, e.g. 7" >&2; exit 2; fi
if ! posint "$W"; then echo "demo-images.sh: W=$W: want a positive LFSR width, e.g. 16" >&2; exit 2; fi
case "$SCAN" in
  range | full | compact) ;;
  *) echo "demo-images.sh: SCAN=$SCAN: want range, full or compact" >&2; exit 2 ;;
esac
case "$COSIM" in
  '' | *[!0-9]*) echo "demo-images.sh: COSIM=$COSIM: want a count of images (0: none)" >&2; exit 2 ;;
esac
if [ -n "$RECIPE" ] && [ -z "$MODEL" ]; then
  # An unknown recipe is a bad setting: ptm train names the ones it has.
  if ! "$ptm" train --data "$DATA" "${recipe[@]}" -o /dev/null --print-recipe > /dev/null 2> "${TMPDIR:-/tmp}/demo-images-recipe.$$"; then
    echo "demo-images.sh: RECIPE=$RECIPE: $(cat "${TMPDIR:-/tmp}/demo-images-recipe.$$")" >&2
    rm -f "${TMPDIR:-/tmp}/demo-images-recipe.$$"
    exit 2
  fi
  rm -f "${TMPDIR:-/tmp}/demo-images-recipe.$$"
fi
# The core the board runs decides each sample's random bits (one LFSR of
# width W per lane), so step 2's golden evaluation takes the same lanes
# and width: the soft board's are eval --fixed's defaults, the Verilated
# board's the settings above (the patches and the scan change the cycles,
# not the answers).
# set_core: the core's flags and its description from the settings
# (again after step 3 takes the image's patches and scan).
set_core() {
  core=(--clause-lanes "$clanes" --literal-lanes "$llanes" --patch-lanes "$PATCHES" --lfsr-width "$W" --scan "$SCAN")
  config="$clanes clause x $llanes literal lanes, $PATCHES patches per cycle, LFSR width $W, $SCAN scan"
}
set_core
evalhw=()
if [ "$BOARD" = sim ]; then evalhw=(--clause-lanes "$clanes" --literal-lanes "$llanes" --lfsr-width "$W"); fi

mkdir -p "$out"
steps_init "$out"

# 1. The model: MODEL, else the one an earlier run left in OUTDIR when
# it was trained with what `ptm train` would train now, else trained now.
# Beside the model the script keeps the line `ptm train --print-recipe`
# printed when it trained it (the recipe after the flags, the seeds and
# the rows, as JSON); a model is reused only when today's line is the
# same, so a changed recipe (convtrain.ImageRecipe) or flag retrains it.
train=(train --data "$DATA" "${recipe[@]}" -o "$out/$modelname")
stamp="$out/$modelname.recipe"
if [ -n "$MODEL" ]; then
  step "1/6 Model: $MODEL (MODEL=..., not trained here)"
  model=$MODEL
  [ -f "$model" ] || { echo "demo-images.sh: MODEL=$MODEL: no such file" >&2; exit 2; }
  "$ptm" inspect --model "$model" > "$out/inspect.txt"
  head -3 "$out/inspect.txt"
else
  step "1/6 Model: the recipe of $DATA today (ptm ${train[*]} --print-recipe), then reuse or train"
  if ! want_recipe=$("$ptm" "${train[@]}" --print-recipe 2> "$out/print-recipe.log"); then
    echo "demo-images.sh: $ptm ${train[*]} --print-recipe failed:" >&2
    cat "$out/print-recipe.log" >&2
    exit 1
  fi
  echo "recipe: $want_recipe"
  had_recipe=$(cat "$stamp" 2>/dev/null || true)
  if [ -f "$out/$modelname" ] && [ "$had_recipe" = "$want_recipe" ]; then
    step_rename "1/6 Model: $out/$modelname, reused from an earlier run with the same recipe (ptm ${train[*]})"
  else
    step_rename "1/6 Train a convolutional PTM on $DATA (ptm ${train[*]}; the default MNIST recipe takes about 15 min on 2 cores, mnist-up5k about 4)"
    if [ -f "$out/$modelname" ]; then
      echo "$out/$modelname is not reused: it was trained with another recipe than today's"
      echo "  its recipe: ${had_recipe:-(none recorded)}"
    fi
    rm -f "$stamp"
    "$ptm" "${train[@]}"
    printf '%s\n' "$want_recipe" > "$stamp"
  fi
  model="$out/$modelname"
fi

first() { if [ "$1" = all ]; then echo "all"; else echo "the first $1"; fi; }
step "2/6 Golden evaluation: the bit-exact fixed-point model (eval --fixed${evalhw[*]:+ ${evalhw[*]}}) on $(first "$N") $DATA test images and $(first "$M") $OOD test images (OOD), K=$K"
"$ptm" eval --model "$model" --data "$DATA" --split test --fixed "${evalhw[@]}" --samples "$K" --limit "$nl" \
  --ood "$OOD" --ood-limit "$ml" --json > "$out/golden-eval.json"
"$ptm" report --eval "$out/golden-eval.json"

step "3/6 The image for the iCEBreaker (UP5K)"
rm -f "$out/synth.json" "$out/synth-search.json"
image=""
if [ "$SYNTH" = 1 ]; then
  # The search (docs/synthesis-flow.md, "Convolutional models"): the
  # configurations fastest first by the cycles expected on the model,
  # each through yosys and nextpnr until one fits and meets timing.
  echo "$ptm synth --model $model --device up5k --no-eth --lfsr-width $W --json (the search; its result cache makes a repeat instant)"
  if "$ptm" synth --model "$model" --device up5k --no-eth --lfsr-width "$W" --out "$out/synth" --json > "$out/synth-search.json"; then
    jstr() { grep -o "\"$1\": *\"\{0,1\}[a-z0-9.]*" "$out/synth-search.json" | head -1 | sed 's/.*: *"\{0,1\}//'; }
    i_lc=$(jstr clause_lanes) i_ll=$(jstr literal_lanes) i_pn=$(jstr patch_lanes) i_scan=$(jstr scan)
    i_mhz=$(jstr clock_mhz) i_seed=$(jstr seed)
    image="$i_lc x $i_ll lanes, $i_pn patches per cycle, $i_scan scan, at $i_mhz MHz"
    echo "the image: $image ($out/synth/top.bin)"
    if [ "$i_lc" = "$clanes" ] && [ "$i_ll" = "$llanes" ]; then
      # the Verilated board runs the image's core unless told otherwise
      if [ -z "$patches_given" ]; then PATCHES=$i_pn; fi
      if [ -z "$scan_given" ]; then SCAN=$i_scan; fi
      set_core
    else
      echo "note: the image has $i_lc x $i_ll lanes, the board LANES=$LANES (the same class sums at each lane count's own random bits; the rates below are the image's estimate)"
    fi
    cp "$out/synth-search.json" "$out/synth.json"
  else
    echo "demo-images.sh: ptm synth found no UP5K image for $model (above); the report has no FPGA figures" >&2
  fi
else
  echo "skipped (SYNTH=1 builds it: $ptm synth --model $model --device up5k --no-eth --json, the search; RECIPE=mnist-up5k's default):"
  echo "the default MNIST model's board does not fit the UP5K (docs/synthesis-flow.md, \"Convolutional models\"); the report has no FPGA figures."
fi

if [ "$BOARD" = soft ]; then
  kind="the software board (\`ptm board --soft\`: host/softboard, the golden fixed-point conv.Core behind the protocol-7 engine on a pseudo-terminal, the line paced at $BAUD baud; not the RTL)"
  step "4/6 Start the software board (ptm board --soft, protocol 7, model preloaded, UART paced at $BAUD baud)"
  board=(board --soft --model "$model" --preload --baud "$BAUD")
else
  step "4/6 Start the Verilated RTL board (ptm board --model, UART only, core $config; the host uploads the model)"
  cycles=""
  rm -f "$out/cosim.json"
  if [ "$COSIM" != 0 ]; then
    echo "the core's cycles per sample: ptm cosim on the first $COSIM $DATA test images, K=$K, the same core configuration"
    "$ptm" cosim --model "$model" --data "$DATA" --split test --vectors "$COSIM" --k "$K" "${core[@]}" --json > "$out/cosim.json"
    jnum() { grep -o "\"$1\": *[0-9.]*" "$out/cosim.json" | head -1 | sed 's/.*: *//'; }
    cmis=$(jnum mismatches)
    cycles=$(jnum cycles_per_sample)
    if [ -n "$cycles" ]; then cycles=$(printf '%.1f' "$cycles"); fi
    echo "cosim: ${cmis:-?} mismatches, ${cycles:-?} cycles per sample"
    if [ "${cmis:-x}" != 0 ]; then echo "demo-images.sh: ptm cosim reported ${cmis:-no} mismatches: $out/cosim.json" >&2; exit 1; fi
  fi
  kind="the Verilated RTL board (\`ptm board --model\`, board_top KIND 1, UART bridged to a pseudo-terminal), core $config"
  if [ -n "$cycles" ]; then
    kind="$kind; the core's $cycles cycles per sample (\`ptm cosim\` of the same configuration on the first $COSIM $DATA test images, K=$K, 0 mismatches)"
    if [ -n "$image" ] && [ "$image" = "$clanes x $llanes lanes, $PATCHES patches per cycle, $SCAN scan, at $i_mhz MHz" ]; then
      # the image's rates at the measured cycles (the same build: a
      # result-cache hit, no tool runs)
      echo "the image's rates at the measured cycles: $ptm synth ... --freq $i_mhz --seed $i_seed --cycles-per-sample $cycles"
      "$ptm" synth --model "$model" --device up5k --no-eth "${core[@]}" --freq "$i_mhz" --seed "$i_seed" \
        --cycles-per-sample "$cycles" --out "$out/synth" --json > "$out/synth.json"
      kind="$kind, the core of the UP5K image ($image)"
    fi
  fi
  board=(board --model "$model" --no-eth --baud "$BAUD" "${core[@]}")
fi
rm -f "$out/board.out" "$out/board.log"
"${with_parent[@]}" "$ptm" "${board[@]}" > "$out/board.out" 2> "$out/board.log" &
board_pid=$!
pty=""
waited=0
while [ -z "$pty" ]; do
  pty=$(sed -n 's/^UART: //p' "$out/board.out" 2>/dev/null || true)
  [ -n "$pty" ] && break
  if ! kill -0 "$board_pid" 2>/dev/null; then
    echo "the board did not start: $ptm ${board[*]}" >&2
    cat "$out/board.log" >&2
    exit 1
  fi
  if [ "$waited" -ge 1200 ]; then echo "the board did not come up in 20 minutes; log: $out/board.log" >&2; exit 1; fi
  sleep 1
  waited=$((waited + 1))
  if [ $((waited % 20)) = 0 ]; then echo "board: still starting (${waited} s)"; fi
done
cat "$out/board.log"
echo "board up on $pty"

step "5/6 Stream $N $DATA test images through the board (K=$K, sums mode: every sample's class sums, so entropy and MI are exact; every answer checked against the golden model)"
"$ptm" stream --uart "$pty@$BAUD" --model "$model" --data "$DATA" --split test --limit "$nl" --samples "$K" --mode sums \
  --json --out "$out/stream-full.json" > "$out/stream.json"
step "6/6 Stream $M $OOD test images through the same board as out-of-distribution queries (K=$K, sums mode, checked the same way)"
"$ptm" stream --uart "$pty@$BAUD" --model "$model" --ood "$OOD" --limit "$ml" --samples "$K" --mode sums \
  --json --out "$out/stream-ood-full.json" > "$out/stream-ood.json"

finish_step
synth=()
if [ -f "$out/synth.json" ]; then synth=(--synth "$out/synth.json"); fi
if [ -f "$out/synth.json" ] && [ -f "$out/synth-search.json" ]; then synth+=(--synth-search "$out/synth-search.json"); fi
printf '\n==================== PTM on images: report ====================\n'
"$ptm" report --eval "$out/golden-eval.json" --stream "$out/stream.json" "${synth[@]}" \
  --md "$out/report.md" --rows "$out/stream-full.json" --steps "$steps" \
  --images "$DATA" --ood-rows "$out/stream-ood-full.json" --ood-stream "$out/stream-ood.json" --ood-name "$OOD" --board "$kind"
printf '\nModel file:          %s\n' "$model"
printf 'Per-query results:   %s, %s\n' "$out/stream-full.json" "$out/stream-ood-full.json"
printf 'Report and figures:  %s (reliability.png, entropy-right-wrong.png, entropy-ood.png, least-certain.png, confident-wrong.png)\n' "$out/report.md"
printf 'Total:               %s s\n' "$(elapsed "$demo_start")"
