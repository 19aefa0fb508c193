#!/bin/bash
# build.sh PYTM_SRC OUT: builds the pyTsetlinMachine drivers of
# docs/fixed-point-training.md section 10 outside the repository.
# PYTM_SRC is the pyTsetlinMachine/ folder of a checkout of
# github.com/cair/pyTsetlinMachine (d6c1cf0 measured), e.g.
#   git clone https://github.com/cair/pyTsetlinMachine /tmp/pytm && git -C /tmp/pytm checkout d6c1cf0
#   bash scripts/pytmbench/build.sh /tmp/pytm/pyTsetlinMachine /tmp/pytm-bench
# The flags are its makefile's (gcc -O3 -ffast-math -Wall -fpic) without
# -Werror, which stops on an unused variable in its sources.
set -euo pipefail
src=$(cd "$1" && pwd)
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cflags=(-O3 -ffast-math -Wall -fpic -I "$src")
libsrc=("$src/MultiClassConvolutionalTsetlinMachine.c" "$src/ConvolutionalTsetlinMachine.c" "$src/Tools.c")
gcc "${cflags[@]}" -o "$out/pytm_conv_bench" "$here/conv_bench.c" "${libsrc[@]}" -lm
gcc "${cflags[@]}" -o "$out/pytm_bench" "$here/tm_bench.c" "${libsrc[@]}" -lm
echo "built $out/pytm_conv_bench and $out/pytm_bench"
