// Baseline x86-64 (SSE2) build of the host reduction loops: the fallback for any CPU, so it gets no -m flags
// of its own (GCC still vectorizes its loops with SSE2).

#define STRATA_REDUCE_ISA_NAMESPACE reduce_scalar
#include "exec/reduce/host_reduce_impl.h"

namespace strata {
namespace reduce_scalar {

const reduce::HostReduceKernels& Table() {
  static constexpr reduce::HostReduceKernels kTable = MakeTable();
  return kTable;
}

}  // namespace reduce_scalar
}  // namespace strata
