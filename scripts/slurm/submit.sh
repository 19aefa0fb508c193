#!/usr/bin/env bash
# submit.sh: `ptm experiments` on a Slurm cluster (docs/howto-slurm.md):
# an array job of N shards (experiments.sbatch, one task per shard) and a
# merge job (merge.sbatch) that starts when every shard has succeeded.
#
#   submit.sh [-n N] [-c CPUS] [-p PTM] [-a SBATCH_ARGS] OUT [-- FLAGS...]
#
#   -n N      shards (array tasks), default 8
#   -c CPUS   CPUs per shard, default 2
#   -p PTM    the ptm binary, default: ptm on PATH (made absolute)
#   -a ARGS   extra sbatch arguments for both jobs (e.g. "-p long -t 12:00:00")
#   OUT       a directory on storage every node sees: OUT/shard-I,
#             OUT/merged (report.md, summary.json, figures), OUT/logs
#   FLAGS     ptm experiments flags for every shard (--quick, --select ...)
#
# Prints the two job ids ("array ARRAYID merge MERGEID") on stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=8 cpus=2 ptm=ptm extra=""
usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while getopts "n:c:p:a:h" o; do
  case $o in
    n) n=$OPTARG ;;
    c) cpus=$OPTARG ;;
    p) ptm=$OPTARG ;;
    a) extra=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
out=$1
shift
[ "${1:-}" != "--" ] || shift
case $n in ''|*[!0-9]*) echo "submit.sh: -n $n: want a number of shards >= 1" >&2; exit 2 ;; esac
case $cpus in ''|*[!0-9]*) echo "submit.sh: -c $cpus: want a number of CPUs >= 1" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] && [ "$cpus" -ge 1 ] || { echo "submit.sh: -n and -c must be at least 1" >&2; exit 2; }
command -v sbatch >/dev/null 2>&1 || { echo "submit.sh: sbatch not found: run on a Slurm submit host" >&2; exit 1; }
if ! ptm=$(command -v "$ptm"); then echo "submit.sh: ptm binary not found (-p PTM)" >&2; exit 1; fi
case $ptm in /*) ;; *) ptm=$(pwd)/$ptm ;; esac
mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
# shellcheck disable=SC2086
array=$(sbatch --parsable $extra --array="1-$n" --cpus-per-task="$cpus" --output="$out/logs/shard-%a.out" \
  --export=ALL,PTM="$ptm" "$here/experiments.sbatch" "$out" "$n" "$@")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable $extra --dependency="afterok:$array" --kill-on-invalid-dep=yes --output="$out/logs/merge.out" \
  --export=ALL,PTM="$ptm" "$here/merge.sbatch" "$out")
merge=${merge%%;*}
echo "array $array merge $merge"
echo "submit.sh: $n shards in array job $array, merge job $merge; report in $out/merged, logs in $out/logs" >&2
