#include "result_check.h"

#include <algorithm>
#include <cmath>

namespace strata::perf {
namespace {

uint64_t WidthMask(size_t size) { return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1; }

int64_t SignExtend(uint64_t bits, size_t size) {
  const unsigned shift = static_cast<unsigned>(64 - 8 * size);
  return static_cast<int64_t>(bits << shift) >> shift;
}

// The expected bits of a reduced integer element: wrap-around arithmetic in the type's width, as the
// hardware does; average divides the wrapped sum, truncating toward zero.
uint64_t ExpectedInteger(const InputModel& m, strataRedOp_t op, size_t index) {
  const TypeDesc& t = m.type();
  const bool isSigned = t.cls == TypeClass::kSigned;
  uint64_t acc = (op == strataProd) ? 1 : 0;
  for (int r = 0; r < m.nranks(); ++r) {
    const uint64_t v = m.Bits(m.Code(r, index));
    if (r == 0 && (op == strataMax || op == strataMin)) {
      acc = v;
      continue;
    }
    switch (op) {
      case strataSum:
      case strataAvg:
        acc += isSigned ? static_cast<uint64_t>(SignExtend(v, t.size)) : v;
        break;
      case strataProd:
        acc *= isSigned ? static_cast<uint64_t>(SignExtend(v, t.size)) : v;
        break;
      case strataMax:
        if (isSigned ? SignExtend(v, t.size) > SignExtend(acc, t.size) : v > acc) acc = v;
        break;
      case strataMin:
        if (isSigned ? SignExtend(v, t.size) < SignExtend(acc, t.size) : v < acc) acc = v;
        break;
      default:
        break;
    }
  }
  acc &= WidthMask(t.size);
  if (op == strataAvg) {
    const int64_t n = m.nranks();
    acc = isSigned ? static_cast<uint64_t>(SignExtend(acc, t.size) / n) : acc / static_cast<uint64_t>(n);
  }
  return acc & WidthMask(t.size);
}

bool FloatElementOk(const InputModel& m, strataRedOp_t op, size_t index, double got) {
  double sum = 0, absSum = 0, prod = 1;
  double hi = -HUGE_VAL, lo = HUGE_VAL;
  for (int r = 0; r < m.nranks(); ++r) {
    const double v = m.FloatValue(m.Code(r, index));
    sum += v;  // exact: small integers
    absSum += std::fabs(v);
    prod *= v;
    hi = std::max(hi, v);
    lo = std::min(lo, v);
  }
  if (std::isnan(got)) return false;
  switch (op) {
    case strataSum:
      return std::fabs(got - sum) <= FloatSumTolerance(m.type(), m.nranks(), absSum, false);
    case strataAvg:
      return std::fabs(got - sum / m.nranks()) <= FloatSumTolerance(m.type(), m.nranks(), absSum, true);
    case strataProd:
      return got == prod;
    case strataMax:
      return got == hi;
    case strataMin:
      return got == lo;
    default:
      return false;
  }
}

}  // namespace

double FloatSumTolerance(const TypeDesc& type, int nranks, double absSum, bool average) {
  // Every partial sum of integers is an integer no larger than absSum: exact when absSum fits.
  if (!average && absSum <= ExactIntegerLimit(type)) return 0.0;
  // Otherwise count rounding events: n-1 additions, plus a pre-multiplication or a final division and the
  // final rounding. Each costs at most u*|operand| + (smallest subnormal), and no operand exceeds
  // absSum (absSum/n for an average, whose addends are pre-divided or whose sum is divided at the end).
  const double u = std::ldexp(1.0, -type.precision);
  const double tiny = std::ldexp(1.0, type.minExponent - type.precision + 1);
  const double magnitude = average ? absSum / nranks : absSum;
  return (nranks + 2) * (u * magnitude + tiny);
}

double QuantUnitError(const strataQuantOptions_t& spec) {
  double half = 0;  // half a step, relative to the block's largest magnitude
  switch (spec.format) {
    case strataQuantInt8: half = 0.5 / 127; break;
    case strataQuantInt4: half = 0.5 / 7; break;
    case strataQuantFp8e4m3: half = std::ldexp(1.0, -4); break;  // 3 mantissa bits
    case strataQuantFp8e5m2: half = std::ldexp(1.0, -3); break;  // 2
    case strataQuantBf16: half = std::ldexp(1.0, -8); break;     // 7
    case strataQuantFp16: half = std::ldexp(1.0, -11); break;    // 10
    default: return 0;
  }
  // A scale stored in fp16 is rounded up (at most 2^-10 relative); 1% spare for the fp32 arithmetic.
  const double scaleSlack = spec.scaleFormat == strataQuantScaleFp16 ? 1 + std::ldexp(1.0, -10) : 1;
  return half * (spec.rounding == strataQuantRoundStochastic ? 2 : 1) * scaleSlack * 1.01;
}

QuantCheck CheckQuantizedElements(const InputModel& m, strataRedOp_t op, const void* out, size_t count,
                                  const std::function<ElementSource(size_t)>& source, double unit, double maxAbs) {
  const TypeDesc& t = m.type();
  const int n = m.nranks();
  const double ioUnit = std::ldexp(1.0, -t.precision);  // rounding of the result to its type
  QuantCheck c;
  for (size_t i = 0; i < count; ++i) {
    const ElementSource src = source(i);
    if (src.kind == ElementSource::Kind::kSkip) continue;
    double want = 0, bound = 0;
    if (src.kind == ElementSource::Kind::kCopy) {
      want = m.FloatValue(m.Code(src.rank, src.index));
      bound = unit * maxAbs;
    } else {
      for (int r = 0; r < n; ++r) want += m.FloatValue(m.Code(r, src.index));
      // n contributions, the reduced value, and fp32 accumulation.
      bound = unit * 2 * n * maxAbs + std::ldexp(1.0, -22) * n * maxAbs;
      if (op == strataAvg) {
        want /= n;
        bound /= n;
      }
    }
    bound += (std::fabs(want) + bound) * ioUnit;
    const double got = FloatBitsToDouble(t, LoadElementBits(out, t.size, i));
    const double err = got - want;
    c.wrong += !(std::fabs(err) <= bound);  // NaN counts
    c.errSq += err * err;
    c.refSq += want * want;
  }
  return c;
}

int64_t CountWrongElements(const InputModel& m, strataRedOp_t op, const void* out, size_t count,
                           const std::function<ElementSource(size_t)>& source) {
  const TypeDesc& t = m.type();
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    const ElementSource src = source(i);
    if (src.kind == ElementSource::Kind::kSkip) continue;
    const uint64_t got = LoadElementBits(out, t.size, i);
    if (src.kind == ElementSource::Kind::kCopy) {
      wrong += got != m.Bits(m.Code(src.rank, src.index));  // a copy is bit-exact
    } else if (t.cls == TypeClass::kFloat) {
      wrong += !FloatElementOk(m, op, src.index, FloatBitsToDouble(t, got));
    } else {
      wrong += got != ExpectedInteger(m, op, src.index);
    }
  }
  return wrong;
}

}  // namespace strata::perf
