#!/usr/bin/env bash
# The measurements of docs/PERFORMANCE.md "Quantized collectives over a slow link" (issue 4, "How fast"):
# quantized against exact allreduce over network namespaces rate-limited with tc tbf, run by run interleaved.
#
#   perf/quant_compare.sh OUTDIR PART [PART...]        (root: the parts make namespaces)
#
# Parts:
#   flat     2 hosts x 1 rank at 1 Gbit, 64 MiB fp32 allreduce: exact, int8:128, int4:32, bf16
#   hier     2 hosts x 2 ranks at 1 Gbit, 64 MiB: exact flat ring (-A ring), exact selector, int8:128 (qhier)
#   small    2 hosts x 1 rank at 1 Gbit, 8 B - 512 KiB (below STRATA_QUANT_MIN_BYTES): STRATA_QUANT=int8:128
#            against unset
#   onehost  2 ranks on one host (shared memory), 8 B - 4 KiB and 32 KiB - 64 MiB: STRATA_QUANT=int8:128 against
#            unset
#
# REPS (default 3) runs of each variant, interleaved; the summary gives the median busbw (the mean of the
# out-of-place and in-place columns of a run) and the ratio to the exact baseline. BIN (default build/bin) and
# QUIET (default quietrun when it exists; empty: bare) as in perf/bench_common.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n 2,18p "$0"; exit 2; }
source perf/bench_common.sh
shift
reps=${REPS:-3}

# run NAME [ENV=V ...] -- LAUNCH...: one run's table into OUTDIR/NAME_REP.txt
run() {
  local name=$1 rep=$2
  shift 2
  echo "   $name rep $rep $(date +%T)"
  $quiet env "$@" > "$out/${name}_$rep.txt" 2>&1 || { echo "FAILED: $name (see $out/${name}_$rep.txt)"; }
}

summary() {  # summary BASE NAME...: per size, each NAME's median time and busbw, and its speed over BASE
  python3 - "$out" "$reps" "$@" <<'PY'
import statistics, sys
out, reps, base, names = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[3:]
def rows(name):
    per = {}
    for r in range(reps):
        try:
            text = open(f"{out}/{name}_{r}.txt").read()
        except OSError:
            continue
        for line in text.splitlines():
            f = line.split()
            if not line.startswith(" ") or len(f) < 12 or not f[0].isdigit():
                continue
            q = len(f) >= 16  # quantized rows carry an error column per half
            try:
                t0, t1 = (float(f[5]), float(f[10])) if q else (float(f[5]), float(f[9]))
                b0, b1 = (float(f[7]), float(f[12])) if q else (float(f[7]), float(f[11]))
            except ValueError:
                continue  # a row broken by a log line written into it
            # Both passes of a run count: out-of-place and in-place.
            for t, b in ((t0, b0), (t1, b1)):
                per.setdefault(int(f[0]), []).append((t, b, f[9] if q else "-", f[-1]))
    return per
data = {n: rows(n) for n in names}
head = []
for n in names:
    head += [f"{n}: time (us), busbw (GB/s), algo" + (", error" if n != base else "")] + ([f"speed vs {base}"] if n != base else [])
print("| size (B) | " + " | ".join(head) + " |")
print("| ---: |" + " --- |" * len(head))
for s in sorted(data[base]):
    bt = statistics.median(x[0] for x in data[base][s])
    cells = []
    for n in names:
        runs = data[n].get(s, [])
        if not runs:
            cells += ["-"] + ([] if n == base else ["-"])
            continue
        t = statistics.median(x[0] for x in runs)
        b = statistics.median(x[1] for x in runs)
        algo, err = runs[0][3], runs[0][2]
        cells.append(f"{t:.4g}, {b:.3g}, {algo}" + ("" if n == base else f", {err}"))
        if n != base:
            cells.append(f"{bt / t:.2f}x")
    print(f"| {s} | " + " | ".join(cells) + " |")
PY
}

for part in "$@"; do
  echo "== $part $(date +%T)"
  case $part in
    flat)
      net_up 2x1 1gbit > /dev/null
      for ((r = 0; r < reps; r++)); do
        for v in exact int8:128 int4:32 bf16; do
          q=(); [[ $v != exact ]] && q=(-q "$v")
          run "flat_${v//:/_}" "$r" STRATA_CALIBRATE=1 bash perf/netns_run.sh 2 1 "$bin/all_reduce_perf" -b 64M -e 64M \
            -n 3 -w 1 "${q[@]}"
        done
      done
      bash "$netns" down > /dev/null
      summary flat_exact flat_int8_128 flat_int4_32 flat_bf16 | tee "$out/flat.md"
      ;;
    hier)
      net_up 2x1 1gbit > /dev/null
      for ((r = 0; r < reps; r++)); do
        run hier_ring "$r" X=1 bash perf/netns_run.sh 2 2 "$bin/all_reduce_perf" -b 64M -e 64M -n 3 -w 1 -A ring
        run hier_auto "$r" X=1 bash perf/netns_run.sh 2 2 "$bin/all_reduce_perf" -b 64M -e 64M -n 3 -w 1
        run hier_int8 "$r" X=1 bash perf/netns_run.sh 2 2 "$bin/all_reduce_perf" -b 64M -e 64M -n 3 -w 1 -q int8:128
      done
      bash "$netns" down > /dev/null
      summary hier_ring hier_auto hier_int8 | tee "$out/hier.md"
      ;;
    small)
      net_up 2x1 1gbit > /dev/null
      for ((r = 0; r < reps; r++)); do
        run small_exact "$r" X=1 bash perf/netns_run.sh 2 1 "$bin/all_reduce_perf" -b 8 -e 512K -f 4 -n 50 -w 5
        run small_env "$r" STRATA_QUANT=int8:128 bash perf/netns_run.sh 2 1 "$bin/all_reduce_perf" -b 8 -e 512K -f 4 \
          -n 50 -w 5
      done
      bash "$netns" down > /dev/null
      summary small_exact small_env | tee "$out/small.md"
      ;;
    onehost)
      for ((r = 0; r < reps; r++)); do
        run onehost_exact "$r" X=1 "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b 8 -e 4K -f 8 -n 5000 -w 500
        run onehost_env "$r" STRATA_QUANT=int8:128 "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b 8 -e 4K -f 8 \
          -n 5000 -w 500
        run onehost_exact_large "$r" X=1 "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b 32K -e 64M -f 8 -n 20 -w 3
        run onehost_env_large "$r" STRATA_QUANT=int8:128 "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b 32K -e 64M \
          -f 8 -n 20 -w 3
      done
      { summary onehost_exact onehost_env; summary onehost_exact_large onehost_env_large; } | tee "$out/onehost.md"
      ;;
    *) echo "unknown part $part" >&2; exit 2 ;;
  esac
done
