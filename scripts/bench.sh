#!/usr/bin/env bash
# The main job: installs what is missing, builds, and runs a 4-rank allreduce benchmark on this host.
# Usage: scripts/bench.sh [stratarun ranks (default 4)] [all_reduce_perf flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh
n=${1:-4}
shift || true
flags=("$@")
# 32 warm-up calls a size: a class timed on its calls (one host; 8 calls per candidate, up to four candidates) has run its
# trial by then (docs/ALGORITHMS.md)
[[ ${#flags[@]} -gt 0 ]] || flags=(-b 8 -e 64M -f 4 -w 32)
exec build/bin/stratarun -n "$n" build/bin/all_reduce_perf "${flags[@]}"
