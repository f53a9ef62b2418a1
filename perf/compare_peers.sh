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
  build/bin/stratarun -n "$n" build/bin/all_reduce_perf -b 64K -e 256M -f 4 -n 20 -w 3 > "$out/strata_large_$r.txt"
  if [[ $peers == *mpi* ]]; then
    "${mpirun[@]}" /tmp/strata-bench/mpi_allreduce_perf -b 8 -e 256M -f 2 > "$out/mpi_$r.txt" 2>&1
  fi
  if [[ $peers == *gloo* ]]; then
    /tmp/strata-bench/gloo_allreduce_perf --nprocs "$n" --iface lo > "$out/gloo_$r.txt" 2>&1 || true
  fi
done
python3 - "$out" "$reps" "$peers" <<'PY'
import statistics, sys, glob, os
out, reps, peers = sys.argv[1], int(sys.argv[2]), sys.argv[3].split()
def rows(path):
    res = {}
    if not os.path.exists(path): return res
    for line in open(path):
        f = line.split()
        if len(f) >= 8 and f[0].isdigit():
            try: res[int(f[0])] = (float(f[5]), float(f[7]))
            except ValueError: pass
    return res
def med(vals): return statistics.median(vals) if vals else float('nan')
sizes = [8, 65536, 1 << 20, 16 << 20, 64 << 20, 256 << 20]
names = {8: "8 B", 65536: "64 KiB", 1 << 20: "1 MiB", 16 << 20: "16 MiB", 64 << 20: "64 MiB", 256 << 20: "256 MiB"}
tools = [("strata", lambda r: {**rows(f"{out}/strata_small_{r}.txt"), **rows(f"{out}/strata_large_{r}.txt")})]
tools += [(p, (lambda p: lambda r: rows(f"{out}/{p}_{r}.txt"))(p)) for p in peers]
print("| size | metric | " + " | ".join(t for t, _ in tools) + " |")
print("|---|---|" + "---|" * len(tools))
for s in sizes:
    metric = "time us" if s == 8 else "busbw GB/s"
    cells = []
    for _, get in tools:
        vals = [get(r).get(s) for r in range(1, reps + 1)]
        vals = [v[0] if s == 8 else v[1] for v in vals if v]
        cells.append(f"{med(vals):.2f} ({min(vals):.2f}-{max(vals):.2f})" if vals else "-")
    print(f"| {names[s]} | {metric} | " + " | ".join(cells) + " |")
PY
