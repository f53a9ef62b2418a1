// Baseline x86-64 (SSE2) build of the host quantization loops: the fallback for any CPU and the reference the
// other builds must match bit for bit.

#define STRATA_QUANT_ISA_NAMESPACE quant_scalar
#include "exec/quant/host_quant_impl.h"
