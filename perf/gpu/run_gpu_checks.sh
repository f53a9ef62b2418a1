#!/usr/bin/env bash
# Runs the CUDA quantization kernels' GPU test and benchmark in one go (one lease of a GPU machine).
# Usage: perf/gpu/run_gpu_checks.sh [OUTDIR]
#   STRATA_GPU_BIN: a folder with quant_cuda_test and quant_cuda_bench built elsewhere for sm_90; used when
#                   they start on this machine, else the script builds them (cmake, ninja and nvcc there).
#   GTEST_ROOT:     a GoogleTest install to build against where the machine has none (include/ and lib/).
# The benchmark runs twice, so the spread between two runs of the same build shows beside the figures.
set -u
out=${1:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv,noheader |
  tee "$out/gpu.txt"
bin=${STRATA_GPU_BIN:-}
if [ -z "$bin" ] || ! "$bin/quant_cuda_test" --gtest_list_tests >/dev/null 2>&1; then
  [ -n "$bin" ] && echo "the binaries in $bin do not start here; building"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
    -DSTRATA_TORCH_PYTHON=/nonexistent ${GTEST_ROOT:+-DGTEST_ROOT=$GTEST_ROOT} >"$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; exit 1; }
  grep "strata:" "$out/configure.log"
  cmake --build build-gpu -j"$(nproc)" --target quant_cuda_test quant_cuda_bench >"$out/build.log" 2>&1 ||
    { tail -40 "$out/build.log"; exit 1; }
  bin=build-gpu/bin
fi
"$bin/quant_cuda_test" >"$out/test.log" 2>&1
echo "quant_cuda_test exit status $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|differ" "$out/test.log" | head -20
for run in 1 2; do "$bin/quant_cuda_bench" | tee "$out/bench$run.log"; done
