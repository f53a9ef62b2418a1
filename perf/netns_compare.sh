#!/usr/bin/env bash
# strata beside Gloo (C++) over two network namespaces joined by a veth pair, rate-limited with tc
# tbf, interleaved run by run; prints the median busbw per size. With two namespaces it also measures
# what the link carries in the same session: strata's broadcast (one direction) and iperf3 one way
# and both ways at once (an allreduce of 2 ranks sends both ways at once), in GB/s per direction.
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
    bash perf/netns_run.sh 2 1 build/bin/broadcast_perf -b 1M -e 256M -f 4 -n 5 -w 1 > "$out/bcast_$r.txt"
    if command -v iperf3 >/dev/null; then
      for mode in oneway bidir; do
        flag=; [[ $mode == bidir ]] && flag=--bidir
        ip netns exec node1 iperf3 -s -1 >/dev/null 2>&1 &
        sleep 0.3
        ip netns exec node0 iperf3 -c 10.77.0.2 -t 4 -J $flag > "$out/iperf_${mode}_$r.json" || true
        wait
      done
    fi
  fi
done
bash "$bench/netns.sh" down >/dev/null
python3 perf/summarize_tables.py --sizes 1M,4M,16M,64M,256M "strata=$out/strata_[0-9]*.txt" \
  "gloo=$out/gloo_[0-9].txt"
if [[ $nodes -eq 2 && $per -eq 1 ]]; then
  echo "strata broadcast (one direction), busbw GB/s:"
  python3 perf/summarize_tables.py --sizes 16M,64M,256M "bcast=$out/bcast_[0-9]*.txt"
  python3 - "$out" <<'PY'
import glob, json, statistics, sys
for mode in ("oneway", "bidir"):
    per_dir = []
    for f in sorted(glob.glob(f"{sys.argv[1]}/iperf_{mode}_*.json")):
        try:
            end = json.load(open(f))["end"]
        except (ValueError, KeyError):
            continue
        rates = [end["sum_received"]["bits_per_second"]]
        if "sum_received_bidir_reverse" in end:
            rates.append(end["sum_received_bidir_reverse"]["bits_per_second"])
        per_dir += [r / 8e9 for r in rates]
    if per_dir:
        print(f"iperf3 {mode}: GB/s per direction median {statistics.median(per_dir):.3f} "
              f"(min {min(per_dir):.3f}, max {max(per_dir):.3f}, {len(per_dir)} samples)")
PY
fi
