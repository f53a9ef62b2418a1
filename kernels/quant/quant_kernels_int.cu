// The CUDA quantization kernels for int8 and int4 codes (quant_kernels_impl.cuh).
#include "quant/quant_kernels_impl.cuh"

namespace strata {
namespace cuda {
namespace detail {

template int LaunchFor<math::QuantFormat::kInt8>(const math::QuantParams&, const math::QuantStep&,
                                                 const math::QuantLayout&, cudaStream_t);
template int LaunchFor<math::QuantFormat::kInt4>(const math::QuantParams&, const math::QuantStep&,
                                                 const math::QuantLayout&, cudaStream_t);

}  // namespace detail
}  // namespace cuda
}  // namespace strata
