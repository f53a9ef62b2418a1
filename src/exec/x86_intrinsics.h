// <immintrin.h> for the SIMD kernels built with AVX2 or AVX-512 (host_reduce_impl.h, host_quant_impl.h); nothing
// where neither is on.
#pragma once

#if defined(__AVX2__) || defined(__AVX512F__)
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12.2 warns about the deliberately undefined vectors inside the AVX-512 intrinsics (GCC PR105593).
// The state must cover the header's own lines, so the include sits inside the push/pop.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif
#endif
