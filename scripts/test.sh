#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test.
# Usage: scripts/test.sh            the normal build (build/)
#        scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#        scripts/test.sh --tsan     ThreadSanitizer (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
case "${1:-}" in
  --asan) export STRATA_BUILD_DIR=build-asan; extra=(-DSTRATA_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo)
          export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;;
  --tsan) export STRATA_BUILD_DIR=build-tsan; extra=(-DSTRATA_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo)
          export TSAN_OPTIONS=halt_on_error=1 ;;
  "") extra=() ;;
  *) echo "usage: scripts/test.sh [--asan|--tsan]" >&2; exit 2 ;;
esac
bash scripts/build.sh "${extra[@]}"
dir=${STRATA_BUILD_DIR:-build}
ctest --test-dir "$dir" --output-on-failure --timeout 600
# Nothing may outlive the tests: no strata segment in /dev/shm.
if ls /dev/shm 2>/dev/null | grep -q '^strata-'; then
  echo "tests left shared-memory segments behind:" >&2
  ls -l /dev/shm | grep strata- >&2
  exit 1
fi
