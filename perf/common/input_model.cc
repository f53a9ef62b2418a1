#include "input_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "float_codec.h"

namespace strata::perf {
namespace {

// splitmix64's finalizer: cheap, and consecutive inputs give unrelated outputs.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// A uniform pick in [0, n) from the hash's high half (no modulo bias worth caring about, no division).
uint64_t Pick(uint64_t hash, uint64_t n) { return ((hash >> 32) * n) >> 32; }

uint64_t WidthMask(size_t size) { return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1; }

uint64_t MaxPositive(const TypeDesc& t) {
  const uint64_t mask = WidthMask(t.size);
  return t.cls == TypeClass::kSigned ? mask >> 1 : mask;
}

int64_t Clamp(int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); }

uint64_t EncodeFloat(const TypeDesc& t, double x) {
  if (t.type == strataFloat32) {
    const float f = static_cast<float>(x);
    uint32_t b;
    std::memcpy(&b, &f, sizeof b);
    return b;
  }
  if (t.type == strataFloat64) {
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
  }
  return EncodeNarrowFloat(t.type, x);
}

template <typename T>
void FillAs(T* out, size_t count, const InputModel& m, int rank) {
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<T>(m.Bits(m.Code(rank, i)));
}

template <typename T>
int64_t CountChangedAs(const T* in, size_t count, const InputModel& m, int rank) {
  int64_t changed = 0;
  for (size_t i = 0; i < count; ++i) changed += in[i] != static_cast<T>(m.Bits(m.Code(rank, i)));
  return changed;
}

constexpr int kGaussCodes = 1 << 16;

// The standard normal quantiles of (k + 0.5) / kGaussCodes, by bisection on erfc: built once.
const std::vector<double>& GaussQuantiles() {
  static const std::vector<double> table = [] {
    std::vector<double> q(kGaussCodes);
    for (int k = 0; k < kGaussCodes; ++k) {
      const double p = (k + 0.5) / kGaussCodes;
      double lo = -9, hi = 9;
      for (int it = 0; it < 60; ++it) {
        const double mid = 0.5 * (lo + hi);
        (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
      }
      q[static_cast<size_t>(k)] = 0.5 * (lo + hi);
    }
    return q;
  }();
  return table;
}

}  // namespace

double GaussPatternMaxAbs() { return std::fabs(GaussQuantiles().front()); }

InputPattern PatternFor(bool reduces, strataRedOp_t op) {
  if (!reduces) return InputPattern::kCopy;
  switch (op) {
    case strataSum:
      return InputPattern::kSum;
    case strataAvg:
      return InputPattern::kAvg;
    case strataProd:
      return InputPattern::kProd;
    default:
      return InputPattern::kMinMax;
  }
}

InputModel::InputModel(const TypeDesc& type, InputPattern pattern, int nranks, uint64_t seed)
    : type_(type), pattern_(pattern), nranks_(nranks), elementKey_(Mix(seed ^ 0x5bd1e9955bd1e995ull)) {
  rankKeys_.resize(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) rankKeys_[static_cast<size_t>(r)] = Mix(seed + Mix(static_cast<uint64_t>(r) + 1));

  const bool isFloat = type.cls == TypeClass::kFloat;
  const bool isUnsigned = type.cls == TypeClass::kUnsigned;
  const int64_t n = nranks;
  double scale = 1.0;
  switch (pattern) {
    case InputPattern::kCopy:
    case InputPattern::kMinMax:
      if (isFloat) {
        lo_ = -200, hi_ = 200, scale = 0.25;
      } else {
        lo_ = isUnsigned ? 0 : -50, hi_ = isUnsigned ? 100 : 50;
      }
      break;
    case InputPattern::kSum:
    case InputPattern::kAvg: {
      int64_t k = 8;
      if (isFloat) {
        // Sums of |x| up to ExactIntegerLimit are exact in every order; keep them there while n allows.
        k = Clamp(static_cast<int64_t>(ExactIntegerLimit(type)) / n, 1, 8);
      } else if (pattern == InputPattern::kAvg) {
        // The average divides the sum in the type: keep the sum from wrapping.
        k = Clamp(static_cast<int64_t>(std::min<uint64_t>(MaxPositive(type), 1u << 20)) / n, 1, 8);
      }
      lo_ = isUnsigned ? 0 : -k;
      hi_ = k;
      break;
    }
    case InputPattern::kProd:
      lo_ = -2, hi_ = 2;
      break;
    case InputPattern::kGauss:
      lo_ = 0, hi_ = kGaussCodes - 1;
      break;
  }
  const size_t span = static_cast<size_t>(hi_ - lo_ + 1);
  bits_.resize(span);
  values_.resize(span);
  for (int64_t c = lo_; c <= hi_; ++c) {
    const size_t i = static_cast<size_t>(c - lo_);
    if (isFloat && pattern == InputPattern::kGauss) {
      bits_[i] = EncodeFloat(type, GaussQuantiles()[i]);
      values_[i] = FloatBitsToDouble(type, bits_[i]);
    } else if (isFloat) {
      bits_[i] = EncodeFloat(type, static_cast<double>(c) * scale);
      values_[i] = FloatBitsToDouble(type, bits_[i]);
    } else {
      bits_[i] = static_cast<uint64_t>(c) & WidthMask(type.size);  // -1 in an unsigned type: its max
      values_[i] = static_cast<double>(c);
    }
  }
}

int64_t InputModel::Code(int rank, size_t index) const {
  const uint64_t h = Mix(static_cast<uint64_t>(index) + rankKeys_[static_cast<size_t>(rank)]);
  if (pattern_ == InputPattern::kProd) {
    const int64_t sign = (h & 1) ? -1 : 1;
    const uint64_t twoRank = Pick(Mix(static_cast<uint64_t>(index) ^ elementKey_), static_cast<uint64_t>(nranks_));
    return twoRank == static_cast<uint64_t>(rank) ? 2 * sign : sign;
  }
  return lo_ + static_cast<int64_t>(Pick(h, static_cast<uint64_t>(hi_ - lo_ + 1)));
}

void InputModel::Fill(void* buf, size_t count, int rank) const {
  switch (type_.size) {
    case 1:
      return FillAs(static_cast<uint8_t*>(buf), count, *this, rank);
    case 2:
      return FillAs(static_cast<uint16_t*>(buf), count, *this, rank);
    case 4:
      return FillAs(static_cast<uint32_t*>(buf), count, *this, rank);
    default:
      return FillAs(static_cast<uint64_t*>(buf), count, *this, rank);
  }
}

int64_t InputModel::CountChangedInputs(const void* buf, size_t count, int rank) const {
  switch (type_.size) {
    case 1:
      return CountChangedAs(static_cast<const uint8_t*>(buf), count, *this, rank);
    case 2:
      return CountChangedAs(static_cast<const uint16_t*>(buf), count, *this, rank);
    case 4:
      return CountChangedAs(static_cast<const uint32_t*>(buf), count, *this, rank);
    default:
      return CountChangedAs(static_cast<const uint64_t*>(buf), count, *this, rank);
  }
}

uint64_t LoadElementBits(const void* buf, size_t size, size_t i) {
  uint64_t bits = 0;
  std::memcpy(&bits, static_cast<const unsigned char*>(buf) + i * size, size);  // little-endian hosts
  return bits;
}

double FloatBitsToDouble(const TypeDesc& type, uint64_t bits) {
  if (type.type == strataFloat32) {
    float f;
    const uint32_t b = static_cast<uint32_t>(bits);
    std::memcpy(&f, &b, sizeof f);
    return f;
  }
  if (type.type == strataFloat64) {
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  return DecodeNarrowFloat(type.type, static_cast<uint32_t>(bits));
}

}  // namespace strata::perf
