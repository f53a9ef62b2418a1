#!/usr/bin/env bash
# Repeats the fault-injection tests and reports how many runs survived (every survivor returned an
# error naming the dead rank in time, destroy succeeded, nothing left in /dev/shm) and how fast
# rank 0 saw the failure.
# Usage: scripts/fault_repeat.sh [REPEATS (20)] [BUILD_DIR (build)]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
bin=${2:-build}/bin/fault_mp_test
[ -x "$bin" ] || { echo "build $bin first (cmake --build build --target fault_mp_test)" >&2; exit 2; }
printf '| %-58s | %4s | %8s | %6s | %s |\n' test runs survived failed "rank 0 detection ms (min / median / max)"
printf '|%s|%s|%s|%s|%s|\n' "$(printf -- '-%.0s' {1..60})" ------ ---------- -------- ------------------------------------------
status=0
for t in 'Transports/RankKilledTest.*/Shm' 'Transports/RankKilledTest.*/Tcp' 'RankStopped.*'; do
  log=$(mktemp)
  "$bin" --gtest_filter="$t" --gtest_repeat="$n" >"$log" 2>&1 || status=1
  ok=$(grep -c '^\[       OK \]' "$log" || true)
  failed=$(grep -c '^\[  FAILED  \] .*ms)$' "$log" || true)
  lat=$(grep -o 'rank 0 saw after [0-9]* ms' "$log" | awk '{print $5}' | sort -n |
        awk '{a[NR]=$1} END {if (NR) printf "%d / %d / %d", a[1], a[int((NR+1)/2)], a[NR]; else print "-"}')
  printf '| %-58s | %4d | %8d | %6d | %s |\n' "$t" "$n" "$ok" "$failed" "$lat"
  if [ "$failed" -gt 0 ]; then { grep -A6 "Failure" "$log" | head -40 >&2; } || true; fi
  rm -f "$log"
done
leftover=$(ls /dev/shm 2>/dev/null | grep -c '^strata-' || true)
echo "strata segments left in /dev/shm: $leftover"
exit $status
