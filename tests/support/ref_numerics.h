// Reference encode/decode for the float formats strata reduces (fp16, bf16, fp8 e4m3 and e5m2, and fp32/fp64
// through the same code), written from the format definitions: sign, biased exponent, mantissa with an
// implicit leading one, subnormals at the smallest exponent, round to nearest even. It shares nothing with
// kernels/include/strata/reduce_math.h, so tests can hold the library's conversions against it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace strata {
namespace ref {

struct FloatFormat {
  const char* name;
  int exp_bits;
  int mant_bits;
  int bias;
  bool ieee_specials;  // top exponent means inf/NaN (fp16, bf16, e5m2); otherwise only s.1111.111 is NaN (e4m3fn)
  bool saturate;       // finite overflow goes to max finite instead of inf (the fp8 formats)
};

inline constexpr FloatFormat kFp16{"fp16", 5, 10, 15, true, false};
inline constexpr FloatFormat kBf16{"bf16", 8, 7, 127, true, false};
inline constexpr FloatFormat kE4M3{"e4m3", 4, 3, 7, false, true};
inline constexpr FloatFormat kE5M2{"e5m2", 5, 2, 15, true, true};
inline constexpr FloatFormat kFp32{"fp32", 8, 23, 127, true, false};
inline constexpr FloatFormat kFp64{"fp64", 11, 52, 1023, true, false};

inline int TotalBits(const FloatFormat& f) { return 1 + f.exp_bits + f.mant_bits; }
inline int MinNormalExp(const FloatFormat& f) { return 1 - f.bias; }
// The spacing of values in [1, 2): twice the unit roundoff of round to nearest.
inline double Epsilon(const FloatFormat& f) { return std::ldexp(1.0, -f.mant_bits); }
inline double MinSubnormal(const FloatFormat& f) { return std::ldexp(1.0, MinNormalExp(f) - f.mant_bits); }

inline double MaxFinite(const FloatFormat& f) {
  const int top = (1 << f.exp_bits) - 1;
  if (f.ieee_specials) return std::ldexp(2.0 - std::ldexp(1.0, -f.mant_bits), top - 1 - f.bias);
  return std::ldexp(2.0 - std::ldexp(2.0, -f.mant_bits), top - f.bias);  // all-ones mantissa is NaN
}

inline double Decode(uint64_t bits, const FloatFormat& f) {
  const int total = TotalBits(f);
  const bool negative = (bits >> (total - 1)) & 1u;
  const uint64_t e = (bits >> f.mant_bits) & ((1ull << f.exp_bits) - 1u);
  const uint64_t m = bits & ((1ull << f.mant_bits) - 1u);
  const uint64_t top = (1ull << f.exp_bits) - 1u;
  double v;
  if (f.ieee_specials && e == top) {
    v = m ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
  } else if (!f.ieee_specials && e == top && m == (1ull << f.mant_bits) - 1u) {
    v = std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    v = std::ldexp(static_cast<double>(m), MinNormalExp(f) - f.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(m + (1ull << f.mant_bits)), static_cast<int>(e) - f.bias - f.mant_bits);
  }
  return negative ? -v : v;
}

// x rounded to nearest even in format f. Overflow: inf where the format has one, else (and for saturating
// formats' finite overflow) max finite. Infinite inputs stay infinite where the format has inf.
inline double RoundToFormat(double x, const FloatFormat& f) {
  if (std::isnan(x)) return x;
  const double max_finite = MaxFinite(f);
  if (std::isinf(x)) return f.ieee_specials ? x : std::copysign(max_finite, x);
  const double a = std::fabs(x);
  if (a == 0) return x;
  const int e = std::max(std::ilogb(a), MinNormalExp(f));
  const double quantum = std::ldexp(1.0, e - f.mant_bits);
  double r = std::nearbyint(a / quantum) * quantum;  // default rounding mode: to nearest, ties to even
  if (r > max_finite) r = f.saturate || !f.ieee_specials ? max_finite : std::numeric_limits<double>::infinity();
  return std::copysign(r, x);
}

// The bit pattern of RoundToFormat(x, f); NaN becomes the format's canonical quiet NaN.
inline uint64_t Encode(double x, const FloatFormat& f) {
  const int total = TotalBits(f);
  const uint64_t sign = std::signbit(x) ? 1ull << (total - 1) : 0;
  const uint64_t mant_mask = (1ull << f.mant_bits) - 1;
  const uint64_t top = (1ull << f.exp_bits) - 1;
  if (std::isnan(x)) return sign | (top << f.mant_bits) | (f.ieee_specials ? 1ull << (f.mant_bits - 1) : mant_mask);
  const double r = std::fabs(RoundToFormat(x, f));
  if (std::isinf(r)) return sign | (top << f.mant_bits);
  if (r == 0) return sign;
  const int e = std::ilogb(r);
  if (e < MinNormalExp(f)) return sign | static_cast<uint64_t>(r / MinSubnormal(f));
  const uint64_t m = static_cast<uint64_t>(std::ldexp(r, f.mant_bits - e)) - (1ull << f.mant_bits);
  return sign | (static_cast<uint64_t>(e + f.bias) << f.mant_bits) | m;
}

// The spacing of format values at v's magnitude (subnormal spacing below the normal range).
inline double Ulp(double v, const FloatFormat& f) {
  const double a = std::fabs(v);
  const int e = a == 0 ? MinNormalExp(f) : std::max(std::ilogb(a), MinNormalExp(f));
  return std::ldexp(1.0, e - f.mant_bits);
}

}  // namespace ref
}  // namespace strata
