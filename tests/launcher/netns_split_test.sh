#!/usr/bin/env bash
# Communicators split across real network boundaries: two network namespaces joined by a veth pair, each its own
# host (STRATA_HOSTID), 2 ranks in each. selector_perf splits its communicator once per forced algorithm, so each
# split's new root must be reachable from the other namespace (the hostname resolves to a loopback address there,
# which the other namespace cannot reach). Every result is checked; hier, which needs two hosts, must be timed.
# Skipped (exit 77) where namespaces cannot be made (not root, no iproute2).
#   netns_split_test.sh BINDIR
set -uo pipefail
bin=$1
tag=sst$$
ns=("${tag}a" "${tag}b")
net=10.$((80 + $$ % 40)).$(($$ / 40 % 250))
out=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null; done
  rm -rf "$out"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

if ! ip netns add "${ns[0]}" 2>/dev/null; then
  echo "netns_split_test: cannot make a network namespace here (needs root and iproute2): skipped"
  exit 77
fi
set -e
ip netns add "${ns[1]}"
ip link add "${tag}0" type veth peer name "${tag}1"
for i in 0 1; do
  ip link set "${tag}$i" netns "${ns[$i]}"
  ip -n "${ns[$i]}" addr add "$net.$((i + 1))/24" dev "${tag}$i"
  ip -n "${ns[$i]}" link set "${tag}$i" up
  ip -n "${ns[$i]}" link set lo up
done
set +e

port=$((20000 + $$ % 10000))
secret=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
for r in 0 1 2 3; do
  n=${ns[$((r / 2))]}
  ip netns exec "$n" env STRATA_RANK=$r STRATA_NRANKS=4 STRATA_LOCAL_RANK=$((r % 2)) STRATA_LOCAL_SIZE=2 \
    STRATA_ROOT_ADDR="$net.1:$port" STRATA_SECRET="$secret" STRATA_HOSTID="$n" STRATA_TIMEOUT=30 \
    "$bin/selector_perf" -b 8 -e 64K -f 64 -n 1 -w 1 -A ring,hier >"$out/$r" 2>&1 &
  pids+=($!)
done
for r in 0 1 2 3; do
  wait "${pids[$r]}"
  rc=$?
  [[ $rc -eq 0 ]] || { cat "$out/$r" >&2; fail "rank $r exited with status $rc"; }
done
pids=()
cat "$out/0"
grep -q "^# wrong results: 0$" "$out/0" || fail "wrong results or no summary"
rows=$(grep -E '^\| [0-9]+ \|' "$out/0")
[[ $(wc -l <<<"$rows") -eq 3 ]] || fail "expected 3 rows"
awk -F'|' '$11 !~ /^ *[0-9.]+ *$/ { print "FAIL: hier not timed across the namespaces: " $0; bad = 1 } END { exit bad }' \
  <<<"$rows" >&2 || exit 1
echo "netns_split_test: ok"
