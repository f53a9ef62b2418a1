// Per-element reduction math shared by the host loops (src/exec/reduce) and the CUDA kernels: conversions
// between float and the narrow float formats (fp16, bf16, fp8 e4m3/e5m2), all round-to-nearest-even and
// bit-exact, and the op functors (sum, prod, max, min) templated on the storage type.
//
// Every function here is force-inlined: the host loops are compiled several times with different ISA flags,
// and an out-of-line copy of an inline function is merged by the linker, so the scalar build could end up
// calling a copy compiled for AVX-512.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define STRATA_HD __host__ __device__
#define STRATA_MATH_INLINE __forceinline__
#else
#define STRATA_HD
#define STRATA_MATH_INLINE inline __attribute__((always_inline))
#endif

namespace strata {
namespace math {

// Storage types of the narrow formats: distinct types so templates can tell fp16 from bf16.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
struct Fp8E4M3 {
  uint8_t bits;
};
struct Fp8E5M2 {
  uint8_t bits;
};

STRATA_HD STRATA_MATH_INLINE uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof(u));
  return u;
}

STRATA_HD STRATA_MATH_INLINE float BitsToFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof(f));
  return f;
}

namespace detail {

// Rounds a finite, non-negative float (its bits `a`) to nearest even in a binary format with `kMant` stored
// mantissa bits and exponent bias `kBias`, subnormals included. Returns the magnitude bits of the result;
// values past the largest finite one come back as larger codes, which the caller clamps or maps to inf.
template <int kMant, int kBias>
STRATA_HD STRATA_MATH_INLINE uint32_t RoundFloatToNarrow(uint32_t a) {
  const int exp = static_cast<int>(a >> 23);
  const int kMinNormalExp = 127 - kBias + 1;  // float biased exponent of the format's smallest normal
  uint32_t q;
  uint32_t rem;
  uint32_t half;
  if (exp >= kMinNormalExp) {
    // Rebias the exponent in place; the mantissa bits below the kept ones are the rounding remainder.
    const uint32_t rebased = a - (static_cast<uint32_t>(127 - kBias) << 23);
    const int shift = 23 - kMant;
    q = rebased >> shift;
    rem = rebased & ((1u << shift) - 1u);
    half = 1u << (shift - 1);
  } else {
    // Subnormal result: count in units of the smallest subnormal, 2^(1 - kBias - kMant).
    const int shift = 151 - kBias - kMant - exp;
    if (shift > 24) return 0;  // below half the smallest subnormal (float subnormals included)
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    q = m >> shift;
    rem = m & ((1u << shift) - 1u);
    half = 1u << (shift - 1);
  }
  // A carry out of the mantissa moves to the next exponent (or from subnormal to normal), as it should.
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return q;
}

}  // namespace detail

// ---- fp16 (IEEE binary16) ----

STRATA_HD STRATA_MATH_INLINE float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  if (exp == 0x1fu) {
    // NaNs come back quiet with their payload, as F16C's vcvtph2ps does.
    return BitsToFloat(sign | 0x7f800000u | (mant ? (0x400000u | (mant << 13)) : 0u));
  }
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    return BitsToFloat(sign | FloatBits(static_cast<float>(mant) * 5.9604644775390625e-8f));
  }
  return BitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

STRATA_HD STRATA_MATH_INLINE uint16_t FloatToHalf(float f) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // quiet NaN
  if (a == 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u);
  const uint32_t q = detail::RoundFloatToNarrow<10, 15>(a);
  return static_cast<uint16_t>(sign | (q >= 0x7c00u ? 0x7c00u : q));  // IEEE: overflow rounds to inf
}

// ---- bf16 ----

STRATA_HD STRATA_MATH_INLINE float BFloat16ToFloat(uint16_t h) { return BitsToFloat(static_cast<uint32_t>(h) << 16); }

STRATA_HD STRATA_MATH_INLINE uint16_t FloatToBFloat16(float f) {
  const uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // keep NaN, quiet
  // Adding 0x7fff plus the kept lsb rounds to nearest even; a carry into the exponent is correct, up to inf.
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// ---- fp8 e4m3 (OCP e4m3fn: bias 7, no infinities, NaN is s.1111.111, max finite 448) ----

STRATA_HD STRATA_MATH_INLINE float Fp8E4M3ToFloat(uint8_t v) {
  const uint32_t sign = static_cast<uint32_t>(v & 0x80u) << 24;
  const uint32_t a = v & 0x7fu;
  if (a == 0x7fu) return BitsToFloat(sign | 0x7fc00000u);
  if (a < 8u) return BitsToFloat(sign | FloatBits(static_cast<float>(a) * 0.001953125f));  // a * 2^-9
  return BitsToFloat(sign | ((a + (120u << 3)) << 20));
}

// Saturating, as CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3): finite values past 448 and
// +-inf become +-448; NaN becomes 0x7f or 0xff (its sign kept).
STRATA_HD STRATA_MATH_INLINE uint8_t FloatToFp8E4M3(float f) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7fu);
  const uint32_t q = detail::RoundFloatToNarrow<3, 7>(a);  // inf comes back as a huge code
  return static_cast<uint8_t>(sign | (q > 0x7eu ? 0x7eu : q));
}

// ---- fp8 e5m2 (bias 15, IEEE-like with inf and NaN, max finite 57344) ----

STRATA_HD STRATA_MATH_INLINE float Fp8E5M2ToFloat(uint8_t v) {
  // e5m2 is the top byte of an fp16.
  return HalfToFloat(static_cast<uint16_t>(static_cast<uint16_t>(v) << 8));
}

// Finite values past 57344 saturate to +-57344 (__NV_SATFINITE); unlike CUDA's SATFINITE path, +-inf stays
// +-inf, since e5m2 can hold it and a sum that saw an inf should still say so. NaN becomes a quiet NaN.
STRATA_HD STRATA_MATH_INLINE uint8_t FloatToFp8E5M2(float f) {
  const uint32_t u = FloatBits(f);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint8_t>(sign | 0x7eu);
  if (a == 0x7f800000u) return static_cast<uint8_t>(sign | 0x7cu);
  const uint32_t q = detail::RoundFloatToNarrow<2, 15>(a);
  return static_cast<uint8_t>(sign | (q > 0x7bu ? 0x7bu : q));
}

// ---- accumulation: what type each storage type computes in ----

// Integers and fp32/fp64 compute in themselves; the narrow float formats compute in float and round once.
template <typename T>
struct AccumTraits {
  using Acc = T;
  STRATA_HD STRATA_MATH_INLINE static Acc Load(T v) { return v; }
  STRATA_HD STRATA_MATH_INLINE static T Store(Acc v) { return v; }
};
template <>
struct AccumTraits<Half> {
  using Acc = float;
  STRATA_HD STRATA_MATH_INLINE static float Load(Half v) { return HalfToFloat(v.bits); }
  STRATA_HD STRATA_MATH_INLINE static Half Store(float v) { return Half{FloatToHalf(v)}; }
};
template <>
struct AccumTraits<BFloat16> {
  using Acc = float;
  STRATA_HD STRATA_MATH_INLINE static float Load(BFloat16 v) { return BFloat16ToFloat(v.bits); }
  STRATA_HD STRATA_MATH_INLINE static BFloat16 Store(float v) { return BFloat16{FloatToBFloat16(v)}; }
};
template <>
struct AccumTraits<Fp8E4M3> {
  using Acc = float;
  STRATA_HD STRATA_MATH_INLINE static float Load(Fp8E4M3 v) { return Fp8E4M3ToFloat(v.bits); }
  STRATA_HD STRATA_MATH_INLINE static Fp8E4M3 Store(float v) { return Fp8E4M3{FloatToFp8E4M3(v)}; }
};
template <>
struct AccumTraits<Fp8E5M2> {
  using Acc = float;
  STRATA_HD STRATA_MATH_INLINE static float Load(Fp8E5M2 v) { return Fp8E5M2ToFloat(v.bits); }
  STRATA_HD STRATA_MATH_INLINE static Fp8E5M2 Store(float v) { return Fp8E5M2{FloatToFp8E5M2(v)}; }
};

// ---- the ops on the accumulation type ----

namespace detail {

// Integer sums and products wrap: computed in the unsigned type, where overflow is defined.
template <typename A>
STRATA_HD STRATA_MATH_INLINE A Add(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    using U = typename std::make_unsigned<A>::type;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename A>
STRATA_HD STRATA_MATH_INLINE A Mul(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    // uint8 would promote to int, where 255 * 255 still fits; wider types stay unsigned.
    using U = typename std::make_unsigned<A>::type;
    return static_cast<A>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// Max and min of floats propagate NaN: if either input is NaN the result is NaN (a's when both are), so a
// reduction never hides a NaN that one rank produced. Equal inputs (+0 vs -0) return b, as x86 maxps does.
// Written as one select, which GCC if-converts and vectorizes; a NaN test on b as well would stop it
// (b NaN already gives b, since a > b is false).
template <typename A>
STRATA_HD STRATA_MATH_INLINE A Max(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    return a > b ? a : b;
  } else {
    return (a > b || a != a) ? a : b;  // NOLINT(misc-redundant-expression): a != a is the NaN test
  }
}

template <typename A>
STRATA_HD STRATA_MATH_INLINE A Min(A a, A b) {
  if constexpr (std::is_integral<A>::value) {
    return a < b ? a : b;
  } else {
    return (a < b || a != a) ? a : b;  // NOLINT(misc-redundant-expression)
  }
}

}  // namespace detail

// Op functors. `Apply` works on the accumulation type (loops that divide afterwards use it); operator()
// works on the storage type and rounds once. Average reduces with FuncSum and divides at the end.
template <typename T>
struct FuncSum {
  using Acc = typename AccumTraits<T>::Acc;
  STRATA_HD STRATA_MATH_INLINE static Acc Apply(Acc a, Acc b) { return detail::Add(a, b); }
  STRATA_HD STRATA_MATH_INLINE T operator()(T a, T b) const {
    return AccumTraits<T>::Store(Apply(AccumTraits<T>::Load(a), AccumTraits<T>::Load(b)));
  }
};

template <typename T>
struct FuncProd {
  using Acc = typename AccumTraits<T>::Acc;
  STRATA_HD STRATA_MATH_INLINE static Acc Apply(Acc a, Acc b) { return detail::Mul(a, b); }
  STRATA_HD STRATA_MATH_INLINE T operator()(T a, T b) const {
    return AccumTraits<T>::Store(Apply(AccumTraits<T>::Load(a), AccumTraits<T>::Load(b)));
  }
};

template <typename T>
struct FuncMax {
  using Acc = typename AccumTraits<T>::Acc;
  STRATA_HD STRATA_MATH_INLINE static Acc Apply(Acc a, Acc b) { return detail::Max(a, b); }
  STRATA_HD STRATA_MATH_INLINE T operator()(T a, T b) const {
    return AccumTraits<T>::Store(Apply(AccumTraits<T>::Load(a), AccumTraits<T>::Load(b)));
  }
};

template <typename T>
struct FuncMin {
  using Acc = typename AccumTraits<T>::Acc;
  STRATA_HD STRATA_MATH_INLINE static Acc Apply(Acc a, Acc b) { return detail::Min(a, b); }
  STRATA_HD STRATA_MATH_INLINE T operator()(T a, T b) const {
    return AccumTraits<T>::Store(Apply(AccumTraits<T>::Load(a), AccumTraits<T>::Load(b)));
  }
};

// The last step of an average: floats divide in their accumulation type, integers truncate toward zero.
template <typename T>
STRATA_HD STRATA_MATH_INLINE typename AccumTraits<T>::Acc DivideAcc(typename AccumTraits<T>::Acc v, int divisor) {
  using Acc = typename AccumTraits<T>::Acc;
  if constexpr (std::is_integral<Acc>::value) {
    return static_cast<Acc>(v / divisor);  // int8 and uint8 promote to int, so a divisor past 127 still fits
  } else {
    return v / static_cast<Acc>(divisor);
  }
}

}  // namespace math
}  // namespace strata
