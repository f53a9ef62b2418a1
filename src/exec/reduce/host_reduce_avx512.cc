// AVX-512 (F, BW, VL, DQ) build of the host reduction loops (src/CMakeLists.txt sets the flags for this file).
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__AVX512DQ__)
#error "host_reduce_avx512.cc needs -mavx512f -mavx512bw -mavx512vl -mavx512dq"
#endif

#define STRATA_REDUCE_ISA_NAMESPACE reduce_avx512
#include "exec/reduce/host_reduce_impl.h"

namespace strata {
namespace reduce_avx512 {

const reduce::HostReduceKernels& Table() {
  static constexpr reduce::HostReduceKernels kTable = MakeTable();
  return kTable;
}

}  // namespace reduce_avx512
}  // namespace strata
