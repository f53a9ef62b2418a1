// AVX2 + FMA + F16C build of the host quantization loops (src/CMakeLists.txt sets the flags, with
// -ffp-contract=off so no multiply-add is fused and the results stay those of the scalar build).
#if !defined(__AVX2__) || !defined(__FMA__) || !defined(__F16C__)
#error "host_quant_avx2.cc needs -mavx2 -mfma -mf16c"
#endif

#define STRATA_QUANT_ISA_NAMESPACE quant_avx2
#include "exec/quant/host_quant_impl.h"
