#!/usr/bin/env bash
# The perf tools' -q: quantized runs on 2 fake hosts of 2 ranks print an error column whose values lie within
# the spec's documented bound, count no element beyond its worst case, and name the quantized algorithm; -q
# where it cannot apply fails with a message.
#   perf_quant_test.sh BINDIR
set -euo pipefail
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }

# Column of the out-of-place error: the 10th field of a data row (size count type redop root time algbw busbw
# #wrong error ...); the in-place error is the 15th, the algorithm the 16th.
check() {  # TOOL SPEC MAXERR ALGO [FLAGS...]
  local tool=$1 spec=$2 max=$3 algo=$4
  shift 4
  local out
  out=$("$bin/stratarun" -n 4 --nodes 2 --timeout 120 "$bin/$tool" -b 64K -e 4M -f 8 -n 2 -w 1 -q "$spec" "$@")
  echo "$out"
  grep -q "#wrong    error" <<<"$out" || fail "$tool -q $spec: no error column"
  grep -q "Out of bounds values : 0 OK" <<<"$out" || fail "$tool -q $spec: results out of bounds"
  local rows
  rows=$(grep -cE '^ +[0-9]+ ' <<<"$out")
  [[ $rows -ge 3 ]] || fail "$tool -q $spec: $rows rows"
  awk -v max="$max" -v algo="$algo" -v what="$tool -q $spec" '
    /^ +[0-9]+ / {
      if (!($10 > 0 && $10 <= max && $15 > 0 && $15 <= max)) { print "FAIL: " what ": error " $10 " / " $15 " not in (0, " max "]"; bad = 1 }
      if ($16 != algo) { print "FAIL: " what ": algorithm " $16 ", expected " algo; bad = 1 }
    }
    END { exit bad }' <<<"$out" >&2 || exit 1
}

check all_reduce_perf int8:128 0.010 qhier
check all_reduce_perf int4:32 0.14 qhier -o avg
check reduce_scatter_perf int8:32 0.008 qdirect
check all_gather_perf fp8e4m3:64 0.05 qdirect -d half

# Where -q cannot apply: a message and a non-zero exit, no hang.
refuse() {  # WORDS TOOL FLAGS...
  local words=$1 tool=$2
  shift 2
  local out
  if out=$("$bin/stratarun" -n 2 --timeout 60 "$bin/$tool" -b 1K -e 1K "$@" 2>&1); then fail "$tool $*: accepted"; fi
  grep -q "$words" <<<"$out" || fail "$tool $*: message does not say '$words': $out"
}
refuse "Broadcast has no quantized form" broadcast_perf -q int8:128
refuse "op max cannot be quantized" all_reduce_perf -q int8:128 -o max
refuse "datatype int32 cannot be quantized" all_reduce_perf -q int8:128 -d int32
refuse "invalid value 'int9' for -q" all_reduce_perf -q int9
refuse "root 5 is not a rank" broadcast_perf -r 5
echo "perf -q: ok"
