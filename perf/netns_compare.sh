#!/usr/bin/env bash
# strata beside Gloo (C++) over two network namespaces joined by a veth pair, rate-limited with tc
# tbf, interleaved run by run; prints the median busbw per size.
#
#   perf/netns_compare.sh RATE [REPS=3] [OUTDIR=/tmp/strata-netns] [NODES=2] [RANKS_PER_NODE=1]
#   e.g. perf/netns_compare.sh 1gbit 3
# Needs root, build/, ../shared/bench/netns.sh and libgloo-dev (scripts/install_deps.sh --with-peers).
set -euo pipefail
cd "$(dirname "$0")/.."
rate=$1 reps=${2:-3} out=${3:-/tmp/strata-netns}/$1 nodes=${4:-2} per=${5:-1}
bench=$(cd ../shared/bench && pwd)
mkdir -p "$out"
if [[ $nodes -eq 2 ]]; then bash "$bench/netns.sh" up 2 --direct --rate "$rate" >/dev/null
else bash "$bench/netns.sh" up "$nodes" --rate "$rate" >/dev/null; fi
gloo=/tmp/strata-bench/gloo_allreduce_perf
mkdir -p /tmp/strata-bench
g++ -O2 -std=c++17 -o $gloo "$bench/gloo_allreduce_perf.cc" -lgloo -pthread
for ((r = 1; r <= reps; r++)); do
  echo "== $rate run $r"
  bash perf/netns_run.sh "$nodes" "$per" build/bin/all_reduce_perf -b 1M -e 256M -f 4 -n 5 -w 1 \
    > "$out/strata_$r.txt"
  if [[ $nodes -eq 2 && $per -eq 1 ]]; then
    id="netns$$-$r"
    ip netns exec node1 $gloo --rank 1 --size 2 --iface eth0 --prefix "$id" -b 1048576 > "$out/gloo_${r}_rank1.log" 2>&1 &
    ip netns exec node0 $gloo --rank 0 --size 2 --iface eth0 --prefix "$id" -b 1048576 > "$out/gloo_$r.txt" 2>&1
    wait
  fi
done
bash "$bench/netns.sh" down >/dev/null
python3 perf/summarize_tables.py --sizes 1M,4M,16M,64M,256M "strata=$out/strata_[0-9]*.txt" \
  "gloo=$out/gloo_[0-9].txt"
