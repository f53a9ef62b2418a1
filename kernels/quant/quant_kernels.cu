// One kernel template, QuantChunkKernel<F, T, M> (quant_kernels_impl.cuh), runs the fused step, quantize
// alone and dequantize alone. It is specialized at compile time for the code format F, the local input's
// storage type T and what the launch reads and writes (M), so no per-element switch remains and each mode
// holds only the registers it needs.
//
// A thread takes kChunk elements of one quantization block, as pieces of 4 spread over the block so that each
// load and store instruction of the block's threads (a group) covers one contiguous span: every 32-byte sector
// is read or written whole by one instruction. It issues every source's loads before the first use, sums in
// fp32, takes its absmax; the group combines the absmaxes (shuffles, or shared memory for groups that are
// not a power of two up to 32); then each thread quantizes its pieces and stores them. A CTA holds whole
// groups, so a block never spans two CTAs. Unaligned buffers and the last, partial block take an
// element-by-element path with the same arithmetic.
//
// The per-element operations are those of strata/quant_math.h in the host kernels' order, so --fmad=false
// builds reproduce the host bytes. Two take a shorter road to the same bits: int8/int4 codes come from the
// float bits of the rounding addition instead of a float-to-integer conversion, and fp8 codes from the chip's
// paired conversion (sm_89 and later); quant_cuda_test checks every format against the host kernels.
#include <cuda_runtime.h>

#include "quant/quant_kernels.h"
#include "strata/quant_math.h"

namespace strata {
namespace cuda {
namespace detail {

using math::QuantFormat;
using math::QuantParams;
using math::QuantStep;

// Instantiated in quant_kernels_{f16,fp8,int}.cu for each format.
template <QuantFormat F>
int LaunchFor(const QuantParams& p, const QuantStep& s, const math::QuantLayout& layout, cudaStream_t stream);

}  // namespace detail

using detail::LaunchFor;
using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;
using math::QuantStep;

int QuantStepAsync(const QuantParams& p, const QuantStep& step, void* stream) {
  if (step.count == 0) return 0;
  if (p.block < math::kQuantMinBlock || p.block > math::kQuantMaxBlock || p.block % math::kQuantBlockMultiple != 0)
    return static_cast<int>(cudaErrorInvalidValue);
  const math::QuantLayout layout = math::QuantLayoutOf(p, step.count);
  cudaStream_t st = static_cast<cudaStream_t>(stream);
  switch (p.format) {
    case QuantFormat::kBf16:
      return LaunchFor<QuantFormat::kBf16>(p, step, layout, st);
    case QuantFormat::kFp16:
      return LaunchFor<QuantFormat::kFp16>(p, step, layout, st);
    case QuantFormat::kFp8E4M3:
      return LaunchFor<QuantFormat::kFp8E4M3>(p, step, layout, st);
    case QuantFormat::kFp8E5M2:
      return LaunchFor<QuantFormat::kFp8E5M2>(p, step, layout, st);
    case QuantFormat::kInt8:
      return LaunchFor<QuantFormat::kInt8>(p, step, layout, st);
    case QuantFormat::kInt4:
      return LaunchFor<QuantFormat::kInt4>(p, step, layout, st);
  }
  return static_cast<int>(cudaErrorInvalidValue);
}

int QuantizeAsync(const QuantParams& p, const void* src, QuantIoType type, size_t count, uint64_t index_base,
                  uint8_t* out, void* stream) {
  QuantStep s{};
  s.count = count;
  s.index_base = index_base;
  s.local = src;
  s.local_type = type;
  s.out = out;
  return QuantStepAsync(p, s, stream);
}

int DequantizeAsync(const QuantParams& p, const uint8_t* in, size_t count, void* dst, QuantIoType type,
                    void* stream) {
  QuantStep s{};
  s.count = count;
  s.in[0] = in;
  s.deq_out = dst;
  s.deq_type = type;
  return QuantStepAsync(p, s, stream);
}

}  // namespace cuda
}  // namespace strata
