#!/usr/bin/env bash
# Builds the CUDA quantization kernels, runs their GPU test and benchmark, in one go (one lease of a GPU
# machine). Usage: perf/gpu/run_gpu_checks.sh [OUTDIR]
#   GTEST_ROOT: a GoogleTest install to use where the machine has none (include/ and lib/).
set -u
out=${1:-gpu-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="80;90" \
  -DSTRATA_TORCH_PYTHON=/nonexistent ${GTEST_ROOT:+-DGTEST_ROOT=$GTEST_ROOT} >"$out/configure.log" 2>&1 ||
  { tail -30 "$out/configure.log"; exit 1; }
grep "strata:" "$out/configure.log"
cmake --build build-gpu -j"$(nproc)" --target quant_cuda_test quant_cuda_bench >"$out/build.log" 2>&1 ||
  { tail -40 "$out/build.log"; exit 1; }
cuobjdump --list-elf build-gpu/lib/libstrata_cuda_kernels.a 2>&1 | tee "$out/elf.txt"
./build-gpu/bin/quant_cuda_test 2>&1 | tee "$out/test.log" | grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED|Failure" | head -20
./build-gpu/bin/quant_cuda_bench 2>&1 | tee "$out/bench.log"
