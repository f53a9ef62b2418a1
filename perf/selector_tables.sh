#!/usr/bin/env bash
# The measurements of docs/PERFORMANCE.md "Algorithm selection" (issue 3, "How fast"), one part per
# call so that each stays a few minutes long and can run under quietrun on its own:
#
#   perf/selector_tables.sh OUTDIR PART [PART...]          (root: the net parts make namespaces)
#
# Parts:
#   local2, local4              selector vs every forced algorithm, 8 B - 256 MiB, 2 / 4 ranks, one host
#   NET-RATE-small, NET-RATE-large  the same over namespaces, NET = 2x2 (2 hosts x 2 ranks) or 4x1,
#                               RATE = 1gbit or 10gbit; small = 8 B - 1 MiB, large = 4 - 256 MiB (x4)
#   job-local2, job-local4, job-NET-RATE-small, job-NET-RATE-large (job-localN: any N ranks on one host)
#                               the same comparisons made within one job by selector_perf (every algorithm on a
#                               communicator of its own, block by block), REPS jobs, a table each; with
#                               COLLECTIVE=allgather, reducescatter, broadcast or reduce (default allreduce)
#                               that collective, every algorithm serving it forced, tables NAME-COLLECTIVE_R.md;
#                               -small 8 B - 1 MiB, -large 4 - 256 MiB (x4; 2 timed calls a size at 1 Gbit/s,
#                               3 at 10, no second look)
#   hier-2x2, hier-2x4          64 MiB allreduce at 1 Gbit, -A hier against -A ring, 3 interleaved runs
#   latency                     8 B - 4 KiB at 4 and 8 ranks, selector against forced ring
#   mpi                         2 ranks, 1 - 256 MiB, strata (selector) beside Open MPI's MPI_Allreduce, both
#                               reusing one buffer per size
#   mpi-registered              the same with strata's buffers from strataMemAlloc (the perf tools' -R 1)
#   mpi-stores                  the same with STRATA_SLOT_STORES cached, streaming and auto, REPS rounds, a table
#                               each
#   mpi-paired                  the same as mpi, each size of a round run by strata and then Open MPI back to back
#                               and over about as long (Open MPI's tool times 0.25 s a size: strata runs as many calls
#                               as take 0.25 s at 10 GB/s, at least 20), REPS rounds; the table adds the ratio of
#                               each pair (mpi-paired-registered: strata on strataMemAlloc buffers)
#   calibration                 the "calibration took" line at 2, 4 and 8 ranks, 5 runs each
#   calibration-cost            what the calibration adds to a launch: stratarun -n N allreduce_hello at 2, 4 and 8
#                               ranks, with STRATA_CALIBRATE=1 and 0 interleaved, REPS x 5 launches each, medians
#
# REPS (default 3) sets the runs of the local and small-size parts (the small-message figures of 4 ranks
# on 2 cores and of the namespaces are bimodal from launch to launch: 5 gives a steadier median).
# BIN (default build/bin) holds the tools; point it and LD_LIBRARY_PATH at a private copy of the build
# so that a rebuild cannot change the library in the middle of a table. Each part wraps its benchmark
# commands in QUIET (default quietrun when it exists; QUIET= runs them bare, e.g. inside one quietrun call).
set -euo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 2 ]] || { sed -n 2,30p "$0"; exit 2; }
source perf/bench_common.sh
shift
one_host=ring,tree,rd,rhd,direct@1M,oneshot@1M,twoshot@512K  # the caps: FIFO and window sizes
multi_host=ring,tree,rd,rhd,direct@1M,hier,hier_leader

for part in "$@"; do
  case $part in
    local2 | local4)
      n=${part#local}
      check "$part" --reps "${REPS:-3}" --algos "$one_host" --iters 10 --warmup 2 -- "$bin/stratarun" -n "$n"
      ;;
    [0-9]x[0-9]-*bit-small | [0-9]x[0-9]-*bit-large)
      IFS=- read -r net rate span <<< "$part"
      hosts=${net%x*} per=${net#*x}
      algos=$multi_host
      [[ $per == 1 ]] && algos=ring,tree,rd,rhd,direct@1M  # hier needs 2+ ranks per host
      net_up "$net" "$rate"
      launch=(-- bash perf/netns_run.sh "$hosts" "$per")
      if [[ $span == small ]]; then
        check "$part" --reps "${REPS:-3}" --algos "$algos" --max 1M --iters-small 50 "${launch[@]}"
      elif [[ $rate == 1gbit ]]; then  # 256 MiB takes seconds a call: one timed call, two runs
        check "$part" --reps 2 --algos "$algos" --min 4M --factor 4 --iters 1 --warmup 1 "${launch[@]}"
      else
        check "$part" --reps 3 --algos "$algos" --min 4M --factor 4 --iters 3 --warmup 1 "${launch[@]}"
      fi
      bash "$netns" down
      ;;
    job-local[0-9]* | job-[0-9]x[0-9]-*bit-small | job-[0-9]x[0-9]-*bit-large)
      spec=${part#job-}
      coll=${COLLECTIVE:-allreduce}
      name=$part
      [[ $coll == allreduce ]] || name=$part-$coll
      if [[ $spec == local* ]]; then
        launch=("$bin/stratarun" -n "${spec#local}")
        algos=$one_host
      else
        IFS=- read -r net rate span <<< "$spec"
        hosts=${net%x*} per=${net#*x}
        algos=$multi_host
        [[ $per == 1 ]] && algos=ring,tree,rd,rhd,direct
        net_up "$net" "$rate"
        launch=(bash perf/netns_run.sh "$hosts" "$per")
      fi
      flags=(-C "$coll")
      # The allreduce's algorithms as listed (selector_perf finds each one's fallback itself); another collective:
      # every algorithm that serves it, selector_perf's default.
      [[ $coll == allreduce ]] && flags+=(-A "$(sed 's/@[0-9]*[KM]//g' <<< "$algos")")
      if [[ $spec == *-small ]]; then
        flags+=(-e 1M)
      elif [[ $spec == *-large ]]; then  # 256 MiB takes seconds a call at 1 Gbit/s: one call a block
        rounds=3
        [[ $rate == 1gbit ]] && rounds=2
        flags+=(-b 4M -e 256M -f 4 -n "$rounds" -x 0 -w 1 -k 1)
      fi
      for ((r = 1; r <= ${REPS:-3}; r++)); do
        echo "== $name job $r $(date +%T)"
        $quiet "${launch[@]}" "$bin/selector_perf" "${flags[@]}" > "$out/${name}_$r.md"
        cat "$out/${name}_$r.md"
      done
      [[ $spec == local* ]] || bash "$netns" down
      ;;
    hier-2x2 | hier-2x4)
      per=${part#hier-2x}
      bash "$netns" up 2 --direct --rate 1gbit
      for r in 1 2 3; do
        for a in ring hier; do
          echo "== $part $a run $r $(date +%T)"
          $quiet bash perf/netns_run.sh 2 "$per" "$bin/all_reduce_perf" -b 64M -e 64M -n 3 -w 1 -A "$a" \
            > "$out/${part}_${a}_$r.txt"
          grep -E '^ +[0-9]' "$out/${part}_${a}_$r.txt"
        done
      done
      bash "$netns" down
      ;;
    latency)
      for n in 4 8; do
        check "latency$n" --reps 3 --algos ring --max 4K --iters-small 1000 -- "$bin/stratarun" -n "$n"
      done
      ;;
    mpi | mpi-registered)
      ompi_setup
      reg=0 name=mpi
      [[ $part == mpi-registered ]] && reg=1 name=mpi_registered
      for r in 1 2 3; do
        echo "== $part run $r $(date +%T)"
        # One size per run, so that every call reuses one buffer as Open MPI's tool does (a sweep rotates
        # its calls through the largest size's buffer and so reads cold memory).
        : > "$out/${name}_strata_$r.txt"
        for s in 1M 2M 4M 8M 16M 32M 64M 128M 256M; do
          $quiet "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b "$s" -e "$s" -n 20 -w 32 -R $reg \
            >> "$out/${name}_strata_$r.txt"
        done
        $quiet "${mpirun[@]}" "$mpi_tool" -b 1048576 -e 268435456 -f 2 \
          > "$out/${name}_ompi_$r.txt" 2>&1
      done
      python3 perf/summarize_tables.py --factor 1 --sizes 1M,2M,4M,8M,16M,32M,64M,128M,256M \
        "strata=$out/${name}_strata_[0-9]*.txt" "openmpi=$out/${name}_ompi_[0-9]*.txt" | tee "$out/$name.md"
      ;;
    mpi-paired | mpi-paired-registered)
      ompi_setup
      reg=0 name=mpi_paired
      [[ $part == mpi-paired-registered ]] && reg=1 name=mpi_paired_registered
      for r in $(seq "${REPS:-3}"); do
        echo "== $part round $r $(date +%T)"
        : > "$out/${name}_strata_$r.txt"
        : > "$out/${name}_ompi_$r.txt"
        for s in 1M 2M 4M 8M 16M 32M 64M 128M 256M; do
          bytes=$(numfmt --from=iec "$s")
          # Open MPI's tool: 5 warm-up calls and as many as take 0.25 s (at least 20); above 16 MiB 2 and 5-20.
          # strata's: 32 warm-up calls, by which a class timed on its calls has run its trial (docs/ALGORITHMS.md).
          iters=$((2500000000 / bytes))
          ((iters < 20)) && iters=20
          $quiet "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b "$s" -e "$s" -n "$iters" -w 32 -R $reg \
            >> "$out/${name}_strata_$r.txt"
          $quiet "${mpirun[@]}" "$mpi_tool" -b "$bytes" -e "$bytes" >> "$out/${name}_ompi_$r.txt" 2>&1
        done
      done
      python3 perf/summarize_tables.py --factor 1 --sizes 1M,2M,4M,8M,16M,32M,64M,128M,256M --ratio strata/openmpi \
        "strata=$out/${name}_strata_[0-9]*.txt" "openmpi=$out/${name}_ompi_[0-9]*.txt" | tee "$out/$name.md"
      ;;
    mpi-stores)
      # The same comparison with each STRATA_SLOT_STORES mode, the four tools one after another at every size,
      # REPS rounds: the VM turns between states in which ordinary or streaming slot stores run faster, and the
      # forced modes' columns show which state each row ran in.
      ompi_setup
      sizes=(1M 2M 4M 8M 16M 32M 64M 128M 256M)
      for r in $(seq "${REPS:-3}"); do
        echo "== mpi-stores round $r $(date +%T)"
        for tool in cached streaming auto openmpi; do : > "$out/stores_${tool}_$r.txt"; done
        for s in "${sizes[@]}"; do
          for mode in cached streaming auto; do
            $quiet env STRATA_SLOT_STORES=$mode "$bin/stratarun" -n 2 "$bin/all_reduce_perf" -b "$s" -e "$s" -n 20 \
              -w 32 >> "$out/stores_${mode}_$r.txt"
          done
          bytes=$(numfmt --from=iec "$s")
          $quiet "${mpirun[@]}" "$mpi_tool" -b "$bytes" -e "$bytes" \
            >> "$out/stores_openmpi_$r.txt" 2>&1
        done
        python3 perf/summarize_tables.py --factor 1 --sizes "$(IFS=,; echo "${sizes[*]}")" \
          "cached=$out/stores_cached_$r.txt" "streaming=$out/stores_streaming_$r.txt" "auto=$out/stores_auto_$r.txt" \
          "openmpi=$out/stores_openmpi_$r.txt" | tee "$out/stores_$r.md"
      done
      ;;
    calibration)
      for r in 1 2 3 4 5; do
        for n in 2 4 8; do
          log=$out/calibration_n${n}_$r.log
          $quiet env STRATA_DEBUG=INFO STRATA_DEBUG_SUBSYS=TUNING "$bin/stratarun" -n "$n" "$bin/all_reduce_perf" \
            -b 8 -e 8 -n 1 -w 1 > "$log" 2>&1
          # every rank logs its own time; the slowest rank's is what init pays, and the slowest once the ranks have
          # all arrived (the time less its wait for the last rank) is the calibration's own
          grep -o 'calibration took [0-9.]* ms (.*waiting for the last rank [0-9.]* ms' "$log" |
            sed -E 's/calibration took ([0-9.]+) ms .*waiting for the last rank ([0-9.]+) ms/\1 \2/' |
            awk -v n="$n" -v r="$r" '{ if ($1 > m) m = $1; if ($1 - $2 > o) o = $1 - $2; k++ }
              END { printf "n=%s run=%s ranks=%d max %.1f ms, after the last rank arrived %.1f ms\n", n, r, k, m, o }' |
            tee -a "$out/calibration.txt"
        done
      done
      ;;
    calibration-cost)
      for n in 2 4 8; do
        for ((r = 1; r <= 5 * ${REPS:-3}; r++)); do
          for cal in 1 0; do
            t0=$(date +%s%N)
            $quiet env STRATA_CALIBRATE=$cal "$bin/stratarun" -n "$n" "$bin/allreduce_hello" > /dev/null
            echo "$n $cal $(( ($(date +%s%N) - t0) / 1000 ))"
          done
        done
      done | tee "$out/calibration_cost_launches.txt" | python3 -c '
import collections, statistics, sys
us = collections.defaultdict(list)
for line in sys.stdin:
    n, cal, t = line.split()
    us[(int(n), cal)].append(int(t) / 1000)
for n in sorted({k[0] for k in us}):
    on, off = statistics.median(us[(n, "1")]), statistics.median(us[(n, "0")])
    print("n=%d launches=%d median with calibration %.1f ms, without %.1f ms, added %.1f ms" % (n, len(us[(n, "1")]), on, off, on - off))
' | tee "$out/calibration_cost.txt"
      ;;
    *)
      echo "unknown part $part" >&2
      exit 2
      ;;
  esac
done
