#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test.
# Usage: scripts/test.sh            the normal build (build/), then a short pass of every fuzz target
#                                   (build-fuzz/; skipped with a message when clang has no libFuzzer)
#        scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#        scripts/test.sh --tsan     ThreadSanitizer (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
case "${1:-}" in
  --asan) export STRATA_BUILD_DIR=build-asan; extra=(-DSTRATA_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo)
          export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ;;
  --tsan) export STRATA_BUILD_DIR=build-tsan; extra=(-DSTRATA_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo)
          export TSAN_OPTIONS=halt_on_error=1:die_after_fork=0 ;;  # the harness forks ranks from a threaded parent
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

# A few seconds of every libFuzzer target on its committed corpus (docs/RELIABILITY.md): only with the
# normal build, and only where clang can link -fsanitize=fuzzer.
[[ -n "${1:-}" ]] && exit 0
probe=$(mktemp -d)
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' >"$probe/p.cc"
if command -v clang++ >/dev/null && clang++ -fsanitize=fuzzer "$probe/p.cc" -o "$probe/p" >/dev/null 2>&1; then
  rm -rf "$probe"
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  if [[ ! -f build-fuzz/CMakeCache.txt ]]; then
    cmake -S . -B build-fuzz "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
      -DCMAKE_CXX_COMPILER=clang++ -DSTRATA_SANITIZE=address,undefined -DSTRATA_BUILD_FUZZ=ON -DSTRATA_BUILD_PERF=OFF
  fi
  cmake -S . -B build-fuzz -DSTRATA_FUZZ_SECONDS="${STRATA_FUZZ_SECONDS:-3}" >/dev/null
  cmake --build build-fuzz -j "$(nproc)" --target strata_fuzz
  ctest --test-dir build-fuzz --output-on-failure -R '^fuzz_'
else
  rm -rf "$probe"
  echo "scripts/test.sh: clang++ with -fsanitize=fuzzer not found: fuzz pass skipped (apt-get install clang)"
fi
