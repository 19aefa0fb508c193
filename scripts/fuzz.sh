#!/usr/bin/env bash
# fuzz.sh: run every Go fuzz target of the project for FUZZTIME each
# (default 5m). Long: only with PTM_LONG_TESTS=1 (for make test-long);
# plain `go test` already runs every target's seed corpus.
set -euo pipefail
if [ "${PTM_LONG_TESTS:-}" != 1 ]; then
  echo "fuzz.sh: skipped (set PTM_LONG_TESTS=1 to fuzz)"
  exit 0
fi
FUZZTIME=${FUZZTIME:-5m}
cd "$(dirname "$0")/.."
for pkg in ./golden/modelfile ./golden/dataset ./host/frame; do
  for target in $(go test "$pkg" -list '^Fuzz' | grep '^Fuzz'); do
    echo "fuzz.sh: $pkg $target ($FUZZTIME)"
    go test "$pkg" -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" -parallel "${FUZZPARALLEL:-1}"
  done
done
