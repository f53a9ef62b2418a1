// CUDA block quantization: the fused step (dequantize, accumulate in fp32, quantize into the outgoing
// range), quantize alone and dequantize alone, on device memory, from the same per-element math as the host
// kernels (strata/quant_math.h). Built with --fmad=false, they give the host kernels' bytes.
//
// This header is plain C++: host code (the executor, tests, benchmarks) includes it without nvcc. Pointers in
// `math::QuantStep` are device pointers; a launch is asynchronous on `stream`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/quant_math.h"

namespace strata {
namespace cuda {

// 0 on success, else the cudaError_t of the launch.
int QuantStepAsync(const math::QuantParams& p, const math::QuantStep& step, void* stream);
int QuantizeAsync(const math::QuantParams& p, const void* src, math::QuantIoType type, size_t count,
                  uint64_t index_base, uint8_t* out, void* stream);
int DequantizeAsync(const math::QuantParams& p, const uint8_t* in, size_t count, void* dst, math::QuantIoType type,
                    void* stream);

}  // namespace cuda
}  // namespace strata
