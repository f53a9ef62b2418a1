// The CUDA quantization kernels for fp8 codes (e4m3, e5m2) (quant_kernels_impl.cuh).
#include "quant/quant_kernels_impl.cuh"

namespace strata {
namespace cuda {
namespace detail {

template int LaunchFor<math::QuantFormat::kFp8E4M3>(const math::QuantParams&, const math::QuantStep&,
                                                    const math::QuantLayout&, cudaStream_t);
template int LaunchFor<math::QuantFormat::kFp8E5M2>(const math::QuantParams&, const math::QuantStep&,
                                                    const math::QuantLayout&, cudaStream_t);

}  // namespace detail
}  // namespace cuda
}  // namespace strata
