#!/usr/bin/env bash
# install-deps.sh: install the system tools this project needs on Debian 12.
# Idempotent: installs only what is missing. Uses sudo when not root.
set -euo pipefail

need=()
command -v verilator    >/dev/null 2>&1 || need+=(verilator)
command -v yosys        >/dev/null 2>&1 || need+=(yosys)
command -v nextpnr-ice40 >/dev/null 2>&1 || need+=(nextpnr-ice40)
command -v icepack      >/dev/null 2>&1 || need+=(fpga-icestorm)
command -v iverilog     >/dev/null 2>&1 || need+=(iverilog)
command -v ip           >/dev/null 2>&1 || need+=(iproute2)
command -v g++          >/dev/null 2>&1 || need+=(g++)
command -v make         >/dev/null 2>&1 || need+=(make)

if [ ${#need[@]} -eq 0 ]; then
  echo "install-deps: all tools present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "install-deps: need root or sudo to install: ${need[*]}" >&2; exit 1
  fi
fi
echo "install-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${need[@]}"
