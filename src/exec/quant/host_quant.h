// Fused quantized reduction steps on host memory, with runtime ISA dispatch (the ISA HostReduceIsa() picks,
// so forcing one for the reductions forces it here too). The per-element math is
// kernels/include/strata/quant_math.h, shared with the CUDA kernels; for round-to-nearest every ISA gives
// the scalar build's bytes.
//
// These run in a plan step on slot memory, so they take raw pointers and trust their arguments: the spec is
// checked once (ValidateQuantParams) when a call is set up, as HostReduce trusts the API layer.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/quant_math.h"
#include "strata/strata.h"

namespace strata {

// Runs one fused step (see math::QuantStep): sums its sources in fp32, writes any of the fp32 partial sum,
// the quantized range and its dequantized value. At least one source must be present.
void HostQuantStep(const math::QuantParams& p, const math::QuantStep& step);

// out <- quantize(src[0..count)), src of type fp32/fp16/bf16; `index_base` is src[0]'s index in the tensor.
void HostQuantize(const math::QuantParams& p, const void* src, math::QuantIoType type, size_t count,
                  uint64_t index_base, uint8_t* out);

// dst[0..count) <- dequantize(in), dst of type fp32/fp16/bf16.
void HostDequantize(const math::QuantParams& p, const uint8_t* in, size_t count, void* dst, math::QuantIoType type);

}  // namespace strata
