// AVX2 + FMA + F16C build of the host reduction loops (src/CMakeLists.txt sets the flags for this file).
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "host_reduce_avx2.cc needs -mavx2 -mfma -mf16c"
#endif

#define STRATA_REDUCE_ISA_NAMESPACE reduce_avx2
#include "exec/reduce/host_reduce_impl.h"

namespace strata {
namespace reduce_avx2 {

const reduce::HostReduceKernels& Table() {
  static constexpr reduce::HostReduceKernels kTable = MakeTable();
  return kTable;
}

}  // namespace reduce_avx2
}  // namespace strata
