#!/usr/bin/env bash
# The perf tools' buffer options give the same checked results as ordinary buffers: -H 1 (transparent huge pages)
# and -R 1 (buffers from strataMemAlloc, which the ranks of one host map into each other), each size's out-of-place
# and in-place calls, over shared memory with the in-place algorithms forced and with the selector; -H or -R with
# another value fails with a message.
#   perf_buffers_test.sh BINDIR
set -euo pipefail
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

for opt in "-H 1" "-R 1" "-H 1 -R 1"; do
  for args in "-A twoshot" "-A ring" ""; do
    # shellcheck disable=SC2086
    out=$("$bin/stratarun" -n 2 --timeout 120 "$bin/all_reduce_perf" -b 8K -e 4M -f 8 -n 2 -w 1 $opt $args)
    echo "$out"
    grep -q "Out of bounds values : 0 OK" <<<"$out" || fail "all_reduce_perf $opt $args: results out of bounds"
    [[ $(grep -cE '^ +[0-9]+ ' <<<"$out") -eq 4 ]] || fail "all_reduce_perf $opt $args: not 4 rows"
  done
  # shellcheck disable=SC2086
  out=$("$bin/stratarun" -n 3 --timeout 120 "$bin/all_gather_perf" -b 64K -e 2M -f 32 -n 2 -w 1 $opt -A oneshot)
  grep -q "Out of bounds values : 0 OK" <<<"$out" || fail "all_gather_perf $opt: results out of bounds: $out"
done
# The selector's 16 MiB allreduce on 2 ranks of shared buffers runs in place, where the ranks reach each other's
# memory (the INIT log says so); STRATA_TUNE=0, so outright, not after a trial against the selector's plan.
out=$(STRATA_TUNE=0 STRATA_DEBUG=INFO STRATA_DEBUG_SUBSYS=INIT "$bin/stratarun" -n 2 --timeout 120 \
  "$bin/all_reduce_perf" -b 16M -e 16M -n 2 -w 1 -R 1 2>&1)
if grep -q "cross-memory attach between the ranks of this host: on" <<<"$out"; then
  grep -qE '^ +16777216 .* twoshot$' <<<"$out" || fail "all_reduce_perf -R 1 at 16 MiB: not twoshot: $out"
else
  echo "cross-memory attach is off here: the 16 MiB choice not checked"
fi

for opt in H R; do
  if out=$("$bin/stratarun" -n 2 --timeout 60 "$bin/all_reduce_perf" -b 1K -e 1K -$opt 2 2>&1); then
    fail "-$opt 2: accepted"
  fi
  grep -q "invalid value '2' for -$opt" <<<"$out" || fail "-$opt 2: message does not say so: $out"
done
echo "perf -H, -R: ok"
