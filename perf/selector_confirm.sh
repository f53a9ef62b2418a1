#!/usr/bin/env bash
# Second looks at the sizes where selector_tables.sh found the selector's choice more than 10% slower
# than a forced algorithm: more runs of only the algorithms in question, and the selector's TUNING log
# lines (its choice and estimate per size, and the cost model's inputs after calibration).
#
#   perf/selector_confirm.sh OUTDIR PART [PART...]      (root: the net parts make namespaces)
#
# Parts: local2 (8 B - 1 MiB), local4 (2 - 256 MiB), 4x1-1gbit (8 B - 8 KiB), 2x2-10gbit (4 - 256 MiB).
# BIN, LD_LIBRARY_PATH and QUIET as for selector_tables.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n 2,10p "$0"; exit 2; }
source perf/bench_common.sh
shift

tuning() {  # tuning NAME LAUNCH... -- PERF-FLAGS...: rank 0's TUNING lines of one selector run
  local name=$1
  shift
  $quiet env STRATA_DEBUG=INFO STRATA_DEBUG_SUBSYS=TUNING "$@" > "$out/$name.tuning.log" 2>&1 || true
  grep -E 'rank 0/.*(calibration took|cost model|AllReduce of)' "$out/$name.tuning.log" |
    sed -E 's/^.*strata INFO //' | tee "$out/$name.tuning.txt"
}

for part in "$@"; do
  case $part in
    local2)
      check confirm-local2 --reps 5 --max 1M --algos ring,rd,rhd,direct@1M,oneshot@1M,twoshot@512K -- \
        "$bin/stratarun" -n 2
      tuning confirm-local2 "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b 8 -e 1M -f 2 -n 5 -w 1
      ;;
    local4)
      check confirm-local4 --reps 3 --min 1M --iters 10 --warmup 2 --algos ring,rhd -- "$bin/stratarun" -n 4
      for r in 1 2 3; do
        tuning "confirm-local4-$r" "$bin/stratarun" -n 4 "$bin/all_reduce_perf" -b 1M -e 4M -f 2 -n 2 -w 1
      done
      ;;
    4x1-1gbit)
      net_up 4x1 1gbit
      check confirm-4x1-1gbit --reps 5 --max 8K --iters-small 200 --algos rd,direct,rhd -- bash perf/netns_run.sh 4 1
      tuning confirm-4x1-1gbit bash perf/netns_run.sh 4 1 "$bin/all_reduce_perf" -b 8 -e 8K -f 2 -n 5 -w 1
      bash "$netns" down
      ;;
    2x2-10gbit)
      net_up 2x2 10gbit
      tuning confirm-2x2-10gbit bash perf/netns_run.sh 2 2 "$bin/all_reduce_perf" -b 1M -e 256M -f 4 -n 1 -w 1
      bash "$netns" down
      ;;
    *)
      echo "unknown part $part" >&2
      exit 2
      ;;
  esac
done
