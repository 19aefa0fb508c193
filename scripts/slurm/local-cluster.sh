#!/usr/bin/env bash
# local-cluster.sh: a throw-away single-node Slurm on this machine, for
# trying scripts/slurm/submit.sh and for its test (scripts/slurm,
# docs/howto-slurm.md). Everything lives in DIR: a munge key and socket,
# slurm.conf (free ports, this host as the only node, CPUs as nproc), the
# state, spool and log files and the daemons' pid files. Nothing under
# /etc is read or changed.
#
#   local-cluster.sh start DIR   start munged, slurmctld and slurmd; wait
#                                until the node is idle; print the line
#                                to export SLURM_CONF
#   local-cluster.sh stop DIR    stop every daemon started in DIR (by the
#                                pids it recorded) and wait for them
#
# Needs munge and slurm-wlm (Debian: scripts/install-deps.sh installs
# them). Run as root or as the user that owns DIR (Slurm then runs jobs
# as that user).
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
cmd=$1
dir=$(mkdir -p "$2" && cd "$2" && pwd)

stop() {
  local f pid left
  # Cancel this cluster's jobs first, so that slurmd ends their processes.
  if [ -f "$dir/slurm.conf" ] && [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    export SLURM_CONF=$dir/slurm.conf
    PATH=$PATH:/usr/sbin:/sbin
    if [ -n "$(squeue -h -o %i 2>/dev/null || true)" ]; then
      scancel --full -u "$(id -un)" 2>/dev/null || true
      for _ in $(seq 1 60); do [ -z "$(squeue -h -o %i 2>/dev/null || true)" ] && break; sleep 0.5; done
    fi
  fi
  for f in slurmd slurmctld munged; do
    [ -f "$dir/$f.pid" ] || continue
    pid=$(cat "$dir/$f.pid")
    if kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  done
  for f in slurmd slurmctld munged; do
    [ -f "$dir/$f.pid" ] || continue
    pid=$(cat "$dir/$f.pid")
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "local-cluster: $f ($pid) did not stop in 10 s: killing it" >&2
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/$f.pid"
  done
  left=""
  for f in slurmd slurmctld munged; do [ -f "$dir/$f.pid" ] && left+=" $f"; done
  [ -z "$left" ] || { echo "local-cluster: still running:$left" >&2; return 1; }
  echo "local-cluster: stopped the daemons of $dir"
}

# freeport prints a TCP port nothing listens on now.
freeport() {
  python3 - <<'PY' 2>/dev/null || echo $((20000 + RANDOM % 20000))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

start() {
  local t
  for t in munged mungekey slurmctld slurmd sinfo; do
    command -v "$t" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
    command -v "$t" >/dev/null 2>&1 || { echo "local-cluster: $t is not installed (Debian: munge, slurm-wlm; bash scripts/install-deps.sh)" >&2; exit 1; }
  done
  for t in slurmd slurmctld munged; do
    if [ -f "$dir/$t.pid" ] && kill -0 "$(cat "$dir/$t.pid")" 2>/dev/null; then
      echo "local-cluster: $t of $dir already runs (pid $(cat "$dir/$t.pid")): stop it first" >&2; exit 1
    fi
  done
  mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
  chmod 700 "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || mungekey --create --keyfile="$dir/munge/munge.key"
  chmod 600 "$dir/munge/munge.key"
  local user host cpus mem p1 p2
  user=$(id -un)
  host=$(hostname -s)
  cpus=$(nproc)
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
  p1=$(freeport); p2=$(freeport)
  while [ "$p2" = "$p1" ]; do p2=$(freeport); done
  cat > "$dir/slurm.conf" <<CONF
# written by scripts/slurm/local-cluster.sh for $dir
ClusterName=ptmlocal
SlurmctldHost=$host(127.0.0.1)
SlurmUser=$user
SlurmdUser=$user
SlurmctldPort=$p1
SlurmdPort=$p2
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.daemon.pid
SlurmdPidFile=$dir/slurmd.daemon.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF=$dir/slurm.conf
  munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" \
    >"$dir/munged.out" 2>&1 &
  echo $! > "$dir/munged.pid"
  for _ in $(seq 1 100); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
  [ -S "$dir/munge/munge.socket" ] || { echo "local-cluster: munged did not start:" >&2; cat "$dir/munged.out" "$dir/munge/munged.log" >&2 || true; stop; exit 1; }
  slurmctld -D -i -f "$dir/slurm.conf" >"$dir/slurmctld.out" 2>&1 &
  echo $! > "$dir/slurmctld.pid"
  slurmd -D -f "$dir/slurm.conf" -N "$host" >"$dir/slurmd.out" 2>&1 &
  echo $! > "$dir/slurmd.pid"
  # Wait for the node to be idle (up to 60 s, longer on a busy machine:
  # LOCAL_CLUSTER_WAIT seconds).
  local wait=${LOCAL_CLUSTER_WAIT:-60} state=""
  for _ in $(seq 1 $((wait * 2))); do
    state=$(sinfo -h -N -o %t 2>/dev/null | head -1 || true)
    case $state in idle|mix|alloc) break ;; esac
    for t in munged slurmctld slurmd; do
      kill -0 "$(cat "$dir/$t.pid")" 2>/dev/null || { echo "local-cluster: $t exited:" >&2; tail -20 "$dir/$t.out" "$dir/$t.log" 2>/dev/null >&2 || true; stop; exit 1; }
    done
    sleep 0.5
  done
  case $state in
    idle|mix|alloc) ;;
    *) echo "local-cluster: the node is '$state' after ${wait}s:" >&2; tail -20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true; stop; exit 1 ;;
  esac
  echo "local-cluster: munged, slurmctld and slurmd run in $dir (node $host, $cpus CPUs, ports $p1, $p2)"
  echo "export SLURM_CONF=$dir/slurm.conf"
}

case $cmd in
  start) start ;;
  stop) stop ;;
  *) usage ;;
esac
