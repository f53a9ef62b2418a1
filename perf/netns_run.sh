#!/usr/bin/env bash
# Runs one program as a multi-host job over network namespaces made by ../shared/bench/netns.sh
# (node0..node{K-1}, node i at 10.77.0.(i+1)). Each namespace is its own host (STRATA_HOSTID),
# so ranks of different namespaces talk over TCP across the (optionally rate-limited) link.
#
# The ranks are pinned as stratarun pins them: rank r on the r-th CPU this script may use, or with more
# ranks than CPUs in contiguous blocks (rank r on CPU r x CPUs / N), so that the ranks of one namespace
# share cores as the ranks of a real host would share theirs. NETNS_BIND=none leaves them unpinned.
#
#   perf/netns_run.sh K RANKS_PER_NODE PROG [ARGS...]
#   e.g. bash ../shared/bench/netns.sh up 2 --direct --rate 1gbit
#        bash perf/netns_run.sh 2 1 build/bin/all_reduce_perf -b 1M -e 256M -f 4
set -euo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 NODES RANKS_PER_NODE PROG [ARGS...]" >&2; exit 2; }
nodes=$1 per=$2
shift 2
n=$((nodes * per))
port=$((29500 + RANDOM % 1000))
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
cpus=()
IFS=, read -ra parts <<<"$(grep Cpus_allowed_list /proc/self/status | cut -f2)"
for part in "${parts[@]}"; do
  for ((c = ${part%-*}; c <= ${part#*-}; c++)); do cpus+=("$c"); done
done
pids=()
for ((r = 0; r < n; r++)); do
  node=$((r / per))
  pin=()
  if [[ ${NETNS_BIND:-core} != none ]]; then
    cpu=$r
    ((n > ${#cpus[@]})) && cpu=$((r * ${#cpus[@]} / n))
    pin=(taskset -c "${cpus[$cpu]}")
  fi
  ip netns exec "node$node" "${pin[@]}" env STRATA_RANK=$r STRATA_NRANKS=$n STRATA_LOCAL_RANK=$((r % per)) \
    STRATA_ROOT_ADDR=10.77.0.1:$port STRATA_HOSTID="node$node" STRATA_SECRET="$secret" "$@" &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do
  wait "$p" || rc=$?
done
exit $rc
