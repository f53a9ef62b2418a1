#include "float_codec.h"

#include <cmath>
#include <cstdlib>

namespace strata::perf {
namespace {

struct FloatLayout {
  int expBits;
  int manBits;
  bool hasInf;  // false: the all-ones exponent holds numbers too, and only all-ones mantissa is NaN (e4m3)
};

FloatLayout LayoutOf(strataDataType_t type) {
  switch (type) {
    case strataFloat16:
      return {5, 10, true};
    case strataBfloat16:
      return {8, 7, true};
    case strataFloat8e4m3:
      return {4, 3, false};
    case strataFloat8e5m2:
      return {5, 2, true};
    default:
      std::abort();  // callers pass narrow float types only
  }
}

}  // namespace

uint32_t EncodeNarrowFloat(strataDataType_t type, double value) {
  const FloatLayout f = LayoutOf(type);
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAllOnes = (1u << f.expBits) - 1;
  const uint32_t manAllOnes = (1u << f.manBits) - 1;
  const uint32_t sign = std::signbit(value) ? 1u << (f.expBits + f.manBits) : 0u;
  const uint32_t nan = sign | expAllOnes << f.manBits | (f.hasInf ? 1u << (f.manBits - 1) : manAllOnes);
  const uint32_t inf = f.hasInf ? (sign | expAllOnes << f.manBits) : nan;
  if (std::isnan(value)) return nan;
  const double a = std::fabs(value);
  if (std::isinf(a)) return inf;
  if (a == 0.0) return sign;

  // a = m * 2^(e - manBits) with m an integer of manBits+1 bits; below the normal range e stays at emin.
  const int emin = 1 - bias;
  int e = 0;
  std::frexp(a, &e);
  e -= 1;
  if (e < emin) e = emin;
  double m = std::nearbyint(std::ldexp(a, f.manBits - e));  // default rounding mode: nearest, ties to even
  const double hidden = std::ldexp(1.0, f.manBits);
  if (m >= 2 * hidden) {  // rounded up past the binade
    m = hidden;
    e += 1;
  }
  uint32_t expField = 0;
  uint32_t man = static_cast<uint32_t>(m);
  if (m >= hidden) {
    expField = static_cast<uint32_t>(e + bias);
    man -= static_cast<uint32_t>(hidden);
  }
  const uint32_t maxExpField = f.hasInf ? expAllOnes - 1 : expAllOnes;
  const uint32_t maxManAtTop = f.hasInf ? manAllOnes : manAllOnes - 1;
  if (expField > maxExpField || (expField == maxExpField && man > maxManAtTop)) return inf;
  return sign | expField << f.manBits | man;
}

double DecodeNarrowFloat(strataDataType_t type, uint32_t bits) {
  const FloatLayout f = LayoutOf(type);
  const int bias = (1 << (f.expBits - 1)) - 1;
  const uint32_t expAllOnes = (1u << f.expBits) - 1;
  const uint32_t manAllOnes = (1u << f.manBits) - 1;
  const bool negative = (bits >> (f.expBits + f.manBits)) & 1u;
  const uint32_t expField = (bits >> f.manBits) & expAllOnes;
  const uint32_t man = bits & manAllOnes;
  double v;
  if (f.hasInf && expField == expAllOnes) {
    v = man == 0 ? HUGE_VAL : NAN;
  } else if (!f.hasInf && expField == expAllOnes && man == manAllOnes) {
    v = NAN;
  } else if (expField == 0) {
    v = std::ldexp(static_cast<double>(man), 1 - bias - f.manBits);
  } else {
    v = std::ldexp(static_cast<double>(man | (1u << f.manBits)), static_cast<int>(expField) - bias - f.manBits);
  }
  return negative ? -v : v;
}

}  // namespace strata::perf
