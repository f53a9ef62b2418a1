#!/usr/bin/env bash
# A perf tool launched by plain mpirun (no stratarun) must find its ranks in OMPI_COMM_WORLD_*, list
# every rank, and pass its own result checks.
#   perf_under_mpirun.sh NP TOOL MPIEXEC [MPIEXEC FLAGS...]
set -euo pipefail
np=$1 tool=$2
shift 2
out=$("$@" -np "$np" "$tool" -b 8 -e 1M -f 32 -n 5 -w 1 -T 30)
echo "$out"
grep -q "Out of bounds values : 0 OK" <<<"$out" || { echo "FAIL: results not OK" >&2; exit 1; }
ranks=$(grep -c "^#  Rank " <<<"$out")
[[ $ranks -eq $np ]] || { echo "FAIL: $ranks ranks listed, expected $np" >&2; exit 1; }
