#!/usr/bin/env bash
# Runs perf/selector_tables.sh parts on a machine that gets this checkout without its build and without
# ../shared beside it (a leased machine with a core per rank, say), from a carried folder:
#
#   perf/carried_tables.sh CARRY OUTDIR SECONDS PART [PART...]
#
#   CARRY    bin/ (stratarun, selector_perf, ...), lib/ (libstrata and any shared library that machine may
#            lack, e.g. libhwloc.so.15) and netns.sh (a copy of ../shared/bench/netns.sh)
#   OUTDIR   the tables (selector_tables.sh's files) and machine.txt, what the machine is
#   SECONDS  the time the whole call may take: each part runs under `timeout` for what is left, so a part
#            cut short leaves the tables it finished, and the parts after it are skipped
#
# The network parts need root, iproute2 and the tbf qdisc: where `netns.sh up` fails they are skipped with a
# message. The summary line of every table finished is printed last.
set -uo pipefail
cd "$(dirname "$0")/.."
[[ $# -ge 4 ]] || { sed -n 2,15p "$0"; exit 2; }
carry=$(realpath "$1") out=$2 budget=$3
shift 3
mkdir -p "$out"
end=$((SECONDS + budget))
{
  date -u
  uname -r
  nproc
  grep -m1 'model name' /proc/cpuinfo
  grep -E 'MemTotal' /proc/meminfo
  command -v lscpu >/dev/null && lscpu | grep -E 'NUMA node\(s\)|L2|L3'
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
export BIN=$carry/bin LD_LIBRARY_PATH=$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} NETNS=$carry/netns.sh QUIET=
net_ok=
for part in "$@"; do
  left=$((end - SECONDS))
  if ((left < 20)); then
    echo "== $part skipped: ${left} s left"
    continue
  fi
  if [[ $part == *bit* && -z $net_ok ]]; then
    if bash "$NETNS" up 2 --direct --rate 10gbit > "$out/netns-check.log" 2>&1; then
      net_ok=yes
      bash "$NETNS" down > /dev/null 2>&1
    else
      net_ok=no
    fi
  fi
  if [[ $part == *bit* && $net_ok == no ]]; then
    echo "== $part skipped: netns.sh up failed here ($(tail -1 "$out/netns-check.log"))"
    continue
  fi
  timeout --kill-after=5 "$left" bash perf/selector_tables.sh "$out" "$part" > "$out/$part.log" 2>&1
  rc=$?
  ((rc == 124 || rc == 137)) && echo "== $part cut short at the time limit"
  [[ $part == *bit* ]] && bash "$NETNS" down > /dev/null 2>&1
done
echo "== summaries"
for f in "$out"/*.md; do
  [[ -e $f ]] || continue
  printf '%s: %s\n' "$(basename "$f" .md)" "$(grep -h 'sizes whose choice' "$f" | head -1)"
done
