// The host reduction loops, written once and compiled once per ISA.
//
// Included without STRATA_REDUCE_ISA_NAMESPACE (by the dispatcher), this header only declares the kernel
// table and each ISA's Table(). host_reduce_{scalar,avx2,avx512}.cc define STRATA_REDUCE_ISA_NAMESPACE before
// including it, which puts the loops and MakeTable() in a namespace of their own: the same templates compiled
// with different -m flags must not share mangled names, or the linker would keep one copy (maybe the AVX-512
// one) for every caller.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/strata.h"

namespace strata {
namespace reduce {

// avg has no kernel of its own: it reduces with sum, and the divisor does the rest.
constexpr int kNumKernelOps = 4;  // strataSum, strataProd, strataMax, strataMin

// dst = a op b, then / divisor when divisor > 1.
using ReduceKernel = void (*)(void* dst, const void* a, const void* b, size_t count, int divisor);
// dst = src / divisor (divisor > 1).
using DivideKernel = void (*)(void* dst, const void* src, size_t count, int divisor);

struct HostReduceKernels {
  ReduceKernel reduce[strataNumTypes][kNumKernelOps];
  DivideKernel divide[strataNumTypes];
};

}  // namespace reduce

namespace reduce_scalar {
const reduce::HostReduceKernels& Table();
}
namespace reduce_avx2 {
const reduce::HostReduceKernels& Table();
}
namespace reduce_avx512 {
const reduce::HostReduceKernels& Table();
}

}  // namespace strata

#if defined(STRATA_REDUCE_ISA_NAMESPACE)

#include "exec/x86_intrinsics.h"

// dst may be a or b exactly, which is no loop-carried dependence, but the compiler cannot prove it and would
// otherwise add a runtime overlap check that sends the aliased call to the scalar loop.
#if defined(__clang__)
#define STRATA_REDUCE_IVDEP _Pragma("clang loop vectorize(assume_safety)")
// Clang reports the loops it still cannot vectorize (fp8, integer division); that is expected.
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wpass-failed"
#else
#define STRATA_REDUCE_IVDEP _Pragma("GCC ivdep")
#endif

#include "strata/reduce_math.h"

namespace strata {
namespace STRATA_REDUCE_ISA_NAMESPACE {

using math::BFloat16;
using math::Fp8E4M3;
using math::Fp8E5M2;
using math::Half;

// ---- portable loops: GCC vectorizes these for the integer and fp32/fp64 types ----

template <typename T, template <typename> class Func>
void ReduceLoop(T* dst, const T* a, const T* b, size_t n) {
  const Func<T> func;
  STRATA_REDUCE_IVDEP
  for (size_t i = 0; i < n; ++i) dst[i] = func(a[i], b[i]);
}

template <typename T, template <typename> class Func>
void ReduceDivideLoop(T* dst, const T* a, const T* b, size_t n, int divisor) {
  using Traits = math::AccumTraits<T>;
  STRATA_REDUCE_IVDEP
  for (size_t i = 0; i < n; ++i) {
    dst[i] = Traits::Store(math::DivideAcc<T>(Func<T>::Apply(Traits::Load(a[i]), Traits::Load(b[i])), divisor));
  }
}

template <typename T>
void DivideLoop(T* dst, const T* src, size_t n, int divisor) {
  using Traits = math::AccumTraits<T>;
  STRATA_REDUCE_IVDEP
  for (size_t i = 0; i < n; ++i) dst[i] = Traits::Store(math::DivideAcc<T>(Traits::Load(src[i]), divisor));
}

// ---- fp16 and bf16 with intrinsics: GCC does not vectorize the bit-level conversions ----

#if defined(__AVX512F__) || defined(__AVX2__)
#define STRATA_REDUCE_HAVE_VECTOR_NARROW 1

// The loops below move blocks of 2 * kLanes elements, held as two float vectors. fp16 loads each half with a
// converting load. bf16 loads the block as one integer register and widens it by interleaving zeros within
// each 128-bit lane; the narrowing packs back the same way, so the order inside a block is permuted and
// restored at no cost (an element-wise op does not care where an element sits).
#if defined(__AVX512F__)
using VecF = __m512;
using RawBlock = __m512i;  // one block of bf16 bits
constexpr size_t kLanes = 16;

inline VecF Splat(float v) { return _mm512_set1_ps(v); }
inline VecF Add(VecF a, VecF b) { return _mm512_add_ps(a, b); }
inline VecF Mul(VecF a, VecF b) { return _mm512_mul_ps(a, b); }
inline VecF Div(VecF a, VecF b) { return _mm512_div_ps(a, b); }
// maxps returns b when either input is NaN; taking a where a is NaN gives math::detail::Max's rule.
inline VecF Max(VecF a, VecF b) {
  return _mm512_mask_mov_ps(_mm512_max_ps(a, b), _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}
inline VecF Min(VecF a, VecF b) {
  return _mm512_mask_mov_ps(_mm512_min_ps(a, b), _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q), a);
}

inline __mmask32 FirstN(size_t n) { return static_cast<__mmask32>((uint64_t{1} << n) - 1u); }

// fp16 blocks load and store as two 256-bit halves, which the conversions take directly.
inline void LoadHalfBlock(const void* p, VecF& lo, VecF& hi) {
  lo = _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p)));
  hi = _mm512_cvtph_ps(_mm256_loadu_si256(static_cast<const __m256i*>(p) + 1));
}
inline void StoreHalfBlock(void* p, VecF lo, VecF hi) {
  _mm256_storeu_si256(static_cast<__m256i*>(p), _mm512_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
  _mm256_storeu_si256(static_cast<__m256i*>(p) + 1, _mm512_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
}
// Masked tails (n < kBlock): elements past `n` are neither read (no fault past the buffer) nor written.
inline void LoadHalfBlockPartial(const void* p, size_t n, VecF& lo, VecF& hi) {
  const __mmask32 m = FirstN(n);
  lo = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(static_cast<__mmask16>(m), p));
  hi = _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(static_cast<__mmask16>(m >> 16), static_cast<const __m256i*>(p) + 1));
}
inline void StoreHalfBlockPartial(void* p, size_t n, VecF lo, VecF hi) {
  const __mmask32 m = FirstN(n);
  _mm256_mask_storeu_epi16(p, static_cast<__mmask16>(m), _mm512_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
  _mm256_mask_storeu_epi16(static_cast<__m256i*>(p) + 1, static_cast<__mmask16>(m >> 16),
                           _mm512_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
}

inline void WidenBFloat16(RawBlock raw, VecF& lo, VecF& hi) {
  const __m512i zero = _mm512_setzero_si512();
  lo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(zero, raw));
  hi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(zero, raw));
}
// Round to nearest even with integer adds, as math::FloatToBFloat16 does; NaN keeps its top bits, made quiet.
// The result is in the low 16 bits of each 32-bit lane.
inline __m512i RoundToBFloat16(VecF v) {
  const __m512i u = _mm512_castps_si512(v);
  const __m512i high = _mm512_srli_epi32(u, 16);
  const __m512i lsb = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), lsb), 16);
  return _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q),
                               _mm512_or_si512(high, _mm512_set1_epi32(0x40)));
}
inline RawBlock NarrowBFloat16(VecF lo, VecF hi) {
  return _mm512_packus_epi32(RoundToBFloat16(lo), RoundToBFloat16(hi));  // lanes <= 0xffff: no saturation
}

inline void LoadBFloat16Block(const void* p, VecF& lo, VecF& hi) { WidenBFloat16(_mm512_loadu_si512(p), lo, hi); }
inline void StoreBFloat16Block(void* p, VecF lo, VecF hi) { _mm512_storeu_si512(p, NarrowBFloat16(lo, hi)); }
inline void LoadBFloat16BlockPartial(const void* p, size_t n, VecF& lo, VecF& hi) {
  WidenBFloat16(_mm512_maskz_loadu_epi16(FirstN(n), p), lo, hi);
}
inline void StoreBFloat16BlockPartial(void* p, size_t n, VecF lo, VecF hi) {
  _mm512_mask_storeu_epi16(p, FirstN(n), NarrowBFloat16(lo, hi));
}

#else  // AVX2 + F16C
using VecF = __m256;
using RawBlock = __m256i;  // one block of bf16 bits
constexpr size_t kLanes = 8;

inline VecF Splat(float v) { return _mm256_set1_ps(v); }
inline VecF Add(VecF a, VecF b) { return _mm256_add_ps(a, b); }
inline VecF Mul(VecF a, VecF b) { return _mm256_mul_ps(a, b); }
inline VecF Div(VecF a, VecF b) { return _mm256_div_ps(a, b); }
inline VecF Max(VecF a, VecF b) { return _mm256_blendv_ps(_mm256_max_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }
inline VecF Min(VecF a, VecF b) { return _mm256_blendv_ps(_mm256_min_ps(a, b), a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q)); }

inline void LoadHalfBlock(const void* p, VecF& lo, VecF& hi) {
  lo = _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p)));
  hi = _mm256_cvtph_ps(_mm_loadu_si128(static_cast<const __m128i*>(p) + 1));
}
inline void StoreHalfBlock(void* p, VecF lo, VecF hi) {
  _mm_storeu_si128(static_cast<__m128i*>(p), _mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT));
  _mm_storeu_si128(static_cast<__m128i*>(p) + 1, _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
}

inline void WidenBFloat16(RawBlock raw, VecF& lo, VecF& hi) {
  const __m256i zero = _mm256_setzero_si256();
  lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, raw));
  hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, raw));
}
inline __m256i RoundToBFloat16(VecF v) {
  const __m256i u = _mm256_castps_si256(v);
  const __m256i high = _mm256_srli_epi32(u, 16);
  const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), lsb), 16);
  const __m256i nan = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(r, nan, _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)));
}
inline RawBlock NarrowBFloat16(VecF lo, VecF hi) {
  return _mm256_packus_epi32(RoundToBFloat16(lo), RoundToBFloat16(hi));  // lanes <= 0xffff: no saturation
}

inline void LoadBFloat16Block(const void* p, VecF& lo, VecF& hi) {
  WidenBFloat16(_mm256_loadu_si256(static_cast<const __m256i*>(p)), lo, hi);
}
inline void StoreBFloat16Block(void* p, VecF lo, VecF hi) {
  _mm256_storeu_si256(static_cast<__m256i*>(p), NarrowBFloat16(lo, hi));
}
#endif

// A block of kBlock elements of T, as two float vectors (lo, hi).
constexpr size_t kBlock = 2 * kLanes;

template <typename T>
inline void LoadBlock(const T* p, VecF& lo, VecF& hi) {
  if constexpr (std::is_same<T, Half>::value) {
    LoadHalfBlock(p, lo, hi);
  } else {
    LoadBFloat16Block(p, lo, hi);
  }
}
template <typename T>
inline void StoreBlock(T* p, VecF lo, VecF hi) {
  if constexpr (std::is_same<T, Half>::value) {
    StoreHalfBlock(p, lo, hi);
  } else {
    StoreBFloat16Block(p, lo, hi);
  }
}
#if defined(__AVX512F__)
template <typename T>
inline void LoadBlockPartial(const T* p, size_t n, VecF& lo, VecF& hi) {
  if constexpr (std::is_same<T, Half>::value) {
    LoadHalfBlockPartial(p, n, lo, hi);
  } else {
    LoadBFloat16BlockPartial(p, n, lo, hi);
  }
}
template <typename T>
inline void StoreBlockPartial(T* p, size_t n, VecF lo, VecF hi) {
  if constexpr (std::is_same<T, Half>::value) {
    StoreHalfBlockPartial(p, n, lo, hi);
  } else {
    StoreBFloat16BlockPartial(p, n, lo, hi);
  }
}
#endif

template <template <typename> class Func>
struct VecOp;
template <>
struct VecOp<math::FuncSum> {
  static VecF Apply(VecF a, VecF b) { return Add(a, b); }
};
template <>
struct VecOp<math::FuncProd> {
  static VecF Apply(VecF a, VecF b) { return Mul(a, b); }
};
template <>
struct VecOp<math::FuncMax> {
  static VecF Apply(VecF a, VecF b) { return Max(a, b); }
};
template <>
struct VecOp<math::FuncMin> {
  static VecF Apply(VecF a, VecF b) { return Min(a, b); }
};

template <template <typename> class Func, bool kDivide>
inline void ApplyBlock(VecF& lo, VecF& hi, VecF b_lo, VecF b_hi, VecF vdiv) {
  lo = VecOp<Func>::Apply(lo, b_lo);
  hi = VecOp<Func>::Apply(hi, b_hi);
  if (kDivide) {
    lo = Div(lo, vdiv);
    hi = Div(hi, vdiv);
  }
}

// T is Half or BFloat16. Each element is widened to float, reduced, divided when kDivide, and rounded once,
// bit-identical to the scalar functors (which do the AVX2 tails).
template <typename T, template <typename> class Func, bool kDivide>
void ReduceNarrowVector(T* dst, const T* a, const T* b, size_t n, int divisor) {
  const VecF vdiv = Splat(static_cast<float>(divisor));
  size_t i = 0;
  VecF lo, hi, b_lo, b_hi;
  for (; i + kBlock <= n; i += kBlock) {
    LoadBlock(a + i, lo, hi);
    LoadBlock(b + i, b_lo, b_hi);
    ApplyBlock<Func, kDivide>(lo, hi, b_lo, b_hi, vdiv);
    StoreBlock(dst + i, lo, hi);
  }
  if (i == n) return;
#if defined(__AVX512F__)
  LoadBlockPartial(a + i, n - i, lo, hi);
  LoadBlockPartial(b + i, n - i, b_lo, b_hi);
  ApplyBlock<Func, kDivide>(lo, hi, b_lo, b_hi, vdiv);
  StoreBlockPartial(dst + i, n - i, lo, hi);
#else
  if (kDivide) {
    ReduceDivideLoop<T, Func>(dst + i, a + i, b + i, n - i, divisor);
  } else {
    ReduceLoop<T, Func>(dst + i, a + i, b + i, n - i);
  }
#endif
}

template <typename T>
void DivideNarrowVector(T* dst, const T* src, size_t n, int divisor) {
  const VecF vdiv = Splat(static_cast<float>(divisor));
  size_t i = 0;
  VecF lo, hi;
  for (; i + kBlock <= n; i += kBlock) {
    LoadBlock(src + i, lo, hi);
    StoreBlock(dst + i, Div(lo, vdiv), Div(hi, vdiv));
  }
  if (i == n) return;
#if defined(__AVX512F__)
  LoadBlockPartial(src + i, n - i, lo, hi);
  StoreBlockPartial(dst + i, n - i, Div(lo, vdiv), Div(hi, vdiv));
#else
  DivideLoop<T>(dst + i, src + i, n - i, divisor);
#endif
}

#endif  // __AVX512F__ || __AVX2__

// ---- kernel entry points, one per (type, op) ----

template <typename T>
constexpr bool kNarrowVector =
#if defined(STRATA_REDUCE_HAVE_VECTOR_NARROW)
    std::is_same<T, Half>::value || std::is_same<T, BFloat16>::value;
#else
    false;
#endif

template <typename T, template <typename> class Func>
void ReduceKernelFn(void* dst_v, const void* a_v, const void* b_v, size_t n, int divisor) {
  T* dst = static_cast<T*>(dst_v);
  const T* a = static_cast<const T*>(a_v);
  const T* b = static_cast<const T*>(b_v);
#if defined(STRATA_REDUCE_HAVE_VECTOR_NARROW)
  if constexpr (kNarrowVector<T>) {
    if (divisor > 1) {
      ReduceNarrowVector<T, Func, true>(dst, a, b, n, divisor);
    } else {
      ReduceNarrowVector<T, Func, false>(dst, a, b, n, divisor);
    }
    return;
  }
#endif
  if (divisor > 1) {
    ReduceDivideLoop<T, Func>(dst, a, b, n, divisor);
  } else {
    ReduceLoop<T, Func>(dst, a, b, n);
  }
}

template <typename T>
void DivideKernelFn(void* dst_v, const void* src_v, size_t n, int divisor) {
  T* dst = static_cast<T*>(dst_v);
  const T* src = static_cast<const T*>(src_v);
#if defined(STRATA_REDUCE_HAVE_VECTOR_NARROW)
  if constexpr (kNarrowVector<T>) {
    DivideNarrowVector<T>(dst, src, n, divisor);
    return;
  }
#endif
  DivideLoop<T>(dst, src, n, divisor);
}

template <typename T>
constexpr void FillType(reduce::HostReduceKernels& table, strataDataType_t type) {
  table.reduce[type][strataSum] = &ReduceKernelFn<T, math::FuncSum>;
  table.reduce[type][strataProd] = &ReduceKernelFn<T, math::FuncProd>;
  table.reduce[type][strataMax] = &ReduceKernelFn<T, math::FuncMax>;
  table.reduce[type][strataMin] = &ReduceKernelFn<T, math::FuncMin>;
  table.divide[type] = &DivideKernelFn<T>;
}

// The kernel table of this ISA; each host_reduce_<isa>.cc returns it from its Table().
constexpr reduce::HostReduceKernels MakeTable() {
  reduce::HostReduceKernels table{};
  FillType<int8_t>(table, strataInt8);
  FillType<uint8_t>(table, strataUint8);
  FillType<int32_t>(table, strataInt32);
  FillType<uint32_t>(table, strataUint32);
  FillType<int64_t>(table, strataInt64);
  FillType<uint64_t>(table, strataUint64);
  FillType<Half>(table, strataFloat16);
  FillType<float>(table, strataFloat32);
  FillType<double>(table, strataFloat64);
  FillType<BFloat16>(table, strataBfloat16);
  FillType<Fp8E4M3>(table, strataFloat8e4m3);
  FillType<Fp8E5M2>(table, strataFloat8e5m2);
  return table;
}

}  // namespace STRATA_REDUCE_ISA_NAMESPACE
}  // namespace strata

#undef STRATA_REDUCE_HAVE_VECTOR_NARROW
#undef STRATA_REDUCE_IVDEP
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

#endif  // STRATA_REDUCE_ISA_NAMESPACE
