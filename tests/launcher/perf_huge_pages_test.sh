#!/usr/bin/env bash
# The perf tools' -H 1: buffers backed by transparent huge pages give the same checked results (each size's
# out-of-place and in-place calls, over shared memory with the in-place algorithms forced and with the selector);
# -H with another value fails with a message.
#   perf_huge_pages_test.sh BINDIR
set -euo pipefail
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

for args in "-A twoshot" "-A ring" ""; do
  # shellcheck disable=SC2086
  out=$("$bin/stratarun" -n 2 --timeout 120 "$bin/all_reduce_perf" -b 8K -e 4M -f 8 -n 2 -w 1 -H 1 $args)
  echo "$out"
  grep -q "Out of bounds values : 0 OK" <<<"$out" || fail "all_reduce_perf -H 1 $args: results out of bounds"
  [[ $(grep -cE '^ +[0-9]+ ' <<<"$out") -eq 4 ]] || fail "all_reduce_perf -H 1 $args: not 4 rows"
done
out=$("$bin/stratarun" -n 3 --timeout 120 "$bin/all_gather_perf" -b 64K -e 2M -f 32 -n 2 -w 1 -H 1 -A oneshot)
grep -q "Out of bounds values : 0 OK" <<<"$out" || fail "all_gather_perf -H 1: results out of bounds: $out"

if out=$("$bin/stratarun" -n 2 --timeout 60 "$bin/all_reduce_perf" -b 1K -e 1K -H 2 2>&1); then fail "-H 2: accepted"; fi
grep -q "invalid value '2' for -H" <<<"$out" || fail "-H 2: message does not say so: $out"
echo "perf -H: ok"
