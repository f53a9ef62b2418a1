// The CUDA quantization kernels for bf16 and fp16 codes (quant_kernels_impl.cuh).
#include "quant/quant_kernels_impl.cuh"

namespace strata {
namespace cuda {
namespace detail {

template int LaunchFor<math::QuantFormat::kBf16>(const math::QuantParams&, const math::QuantStep&,
                                                 const math::QuantLayout&, cudaStream_t);
template int LaunchFor<math::QuantFormat::kFp16>(const math::QuantParams&, const math::QuantStep&,
                                                 const math::QuantLayout&, cudaStream_t);

}  // namespace detail
}  // namespace cuda
}  // namespace strata
