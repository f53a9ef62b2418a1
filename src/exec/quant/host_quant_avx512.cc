// AVX-512 (F, BW, VL, DQ) build of the host quantization loops (src/CMakeLists.txt sets the flags, with
// -ffp-contract=off). Runs only where the CPU has AVX-512; tests compare it with the scalar build there.
#if !defined(__AVX512F__) || !defined(__AVX512BW__) || !defined(__AVX512VL__) || !defined(__AVX512DQ__)
#error "host_quant_avx512.cc needs -mavx512f -mavx512bw -mavx512vl -mavx512dq"
#endif

#define STRATA_QUANT_ISA_NAMESPACE quant_avx512
#include "exec/quant/host_quant_impl.h"
