#!/usr/bin/env bash
# install-yowasp.sh: install the YoWASP toolchain (WebAssembly builds of
# yosys, nextpnr-ice40, icepack and icepll from npm) that `ptm synth
# --toolchain yowasp` runs with node. Installs into $PTM_YOWASP, else
# <user cache dir>/ptm-yowasp (synth.YoWASPDir); idempotent.
# Needs node >= 18 and npm (Debian: apt-get install nodejs npm).
set -euo pipefail

# Pinned: another version is another toolchain (the synthesis cache key
# holds the versions); docs/synthesis.md "Toolchains" was measured with
# these.
YOSYS_VERSION=0.55.944
NEXTPNR_VERSION=0.8.621

dir=${PTM_YOWASP:-${XDG_CACHE_HOME:-$HOME/.cache}/ptm-yowasp}
for t in node npm; do
  command -v "$t" >/dev/null 2>&1 || { echo "install-yowasp: $t is not on PATH (apt-get install nodejs npm)" >&2; exit 1; }
done
have() { [ -f "$dir/node_modules/$1/package.json" ] && grep -q "\"version\": \"$2\"" "$dir/node_modules/$1/package.json"; }
if have @yowasp/yosys "$YOSYS_VERSION" && have @yowasp/nextpnr-ice40 "$NEXTPNR_VERSION"; then
  echo "install-yowasp: @yowasp/yosys $YOSYS_VERSION and @yowasp/nextpnr-ice40 $NEXTPNR_VERSION present in $dir"
  exit 0
fi
mkdir -p "$dir"
npm install --prefix "$dir" --no-audit --no-fund --save-exact \
  "@yowasp/yosys@$YOSYS_VERSION" "@yowasp/nextpnr-ice40@$NEXTPNR_VERSION"
echo "install-yowasp: installed in $dir (use it with PTM_YOWASP=$dir if that is not the default)"
