#!/usr/bin/env bash
# Runs strata's all_reduce_perf beside Open MPI's MPI_Allreduce and Gloo (the peers in
# ../shared/bench), interleaved run by run on this host, and prints the median of each figure.
#
#   perf/compare_peers.sh [RANKS=2] [REPS=3] [OUTDIR=/tmp/strata-compare] [PEERS="mpi gloo"]
# Needs build/ (scripts/build.sh) and the peers' packages (scripts/install_deps.sh --with-peers).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2} reps=${2:-3} out=${3:-/tmp/strata-compare} peers=${4:-"mpi gloo"}
bench=$(cd ../shared/bench && pwd)
mkdir -p "$out" /tmp/strata-bench
mpicc -O2 -o /tmp/strata-bench/mpi_allreduce_perf "$bench/mpi_allreduce_perf.c"
if [[ $peers == *gloo* ]]; then
  g++ -O2 -std=c++17 -o /tmp/strata-bench/gloo_allreduce_perf "$bench/gloo_allreduce_perf.cc" -lgloo -pthread
fi
mpirun=(mpirun --allow-run-as-root --oversubscribe --mca pml ob1 --mca oob_tcp_if_include lo
        --mca btl_tcp_if_include lo -np "$n")
for ((r = 1; r <= reps; r++)); do
  echo "== run $r"
  build/bin/stratarun -n "$n" build/bin/all_reduce_perf -b 8 -e 8 -n 20000 -w 1000 > "$out/strata_small_$r.txt"
  build/bin/stratarun -n "$n" build/bin/all_reduce_perf -b 64K -e 256M -f 4 -n 20 -w 32 > "$out/strata_large_$r.txt"
  # One size on one buffer, many iterations: the peers' own method (their tools reuse one buffer,
  # while the sweep above rotates through a 256 MiB buffer and so reads cold memory).
  build/bin/stratarun -n "$n" build/bin/all_reduce_perf -b 1M -e 1M -n 1000 -w 50 > "$out/strata1m_$r.txt"
  if [[ $peers == *mpi* ]]; then
    "${mpirun[@]}" /tmp/strata-bench/mpi_allreduce_perf -b 8 -e 268435456 -f 2 > "$out/mpi_$r.txt" 2>&1
  fi
  if [[ $peers == *gloo* ]]; then
    /tmp/strata-bench/gloo_allreduce_perf --nprocs "$n" --iface lo > "$out/gloo_$r.txt" 2>&1 || true
  fi
done
for ((r = 1; r <= reps; r++)); do
  cat "$out/strata_small_$r.txt" "$out/strata_large_$r.txt" > "$out/strata_$r.txt"
done
tools=("strata=$out/strata_[0-9]*.txt" "strata-1MiB-hot=$out/strata1m_[0-9]*.txt")
for p in $peers; do tools+=("$p=$out/${p}_[0-9]*.txt"); done
python3 perf/summarize_tables.py --factor "$(python3 -c "print(2 * ($n - 1) / $n)")" --sizes 8,64K,1M,16M,64M,256M \
  "${tools[@]}"
