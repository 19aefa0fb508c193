#!/usr/bin/env bash
# install-deps.sh: install the system tools (and data sets) this project
# needs on Debian 12.
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
# A single-node Slurm for the sharded-sweep test (scripts/slurm,
# docs/howto-slurm.md): its daemons, client commands and munge.
command -v slurmctld    >/dev/null 2>&1 || need+=(slurm-wlm)
command -v munged       >/dev/null 2>&1 || need+=(munge)
# Data sets: Debian packages of data files, looked for by a file they
# install. Fashion-MNIST is read from $PTM_FASHION_MNIST_DIR when set (as
# ptm does), else from where the package puts it. (MNIST comes with the Go
# modules: make deps runs go mod download.)
[ -f "${PTM_FASHION_MNIST_DIR:-/usr/share/datasets/fashion-mnist}/train-images-idx3-ubyte.gz" ] || need+=(dataset-fashion-mnist)

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
# Another apt or dpkg (unattended-upgrades, a second install) may hold the
# lock: wait for it, up to APT_LOCK_WAIT seconds (default 900), polling
# every APT_LOCK_POLL seconds, instead of failing at once.
APT_LOCK_WAIT=${APT_LOCK_WAIT:-900}
APT_LOCK_POLL=${APT_LOCK_POLL:-5}
apt_get() {
  local start=$SECONDS log rc
  log=$(mktemp)
  while :; do
    rc=0
    $SUDO apt-get -o DPkg::Lock::Timeout="$APT_LOCK_WAIT" "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
    if [ "$rc" -eq 0 ]; then rm -f "$log"; return 0; fi
    if ! grep -qiE 'could not get lock|unable to (acquire|lock)|another process' "$log"; then
      rm -f "$log"; return "$rc"
    fi
    if [ $((SECONDS - start)) -ge "$APT_LOCK_WAIT" ]; then
      echo "install-deps: apt is still locked by another process after ${APT_LOCK_WAIT}s (apt-get $*): try again when it has finished" >&2
      rm -f "$log"; return "$rc"
    fi
    echo "install-deps: another apt/dpkg holds the lock; waiting (up to ${APT_LOCK_WAIT}s)..." >&2
    sleep "$APT_LOCK_POLL"
  done
}

echo "install-deps: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_get update -qq
apt_get install -y -qq --no-install-recommends "${need[@]}"
