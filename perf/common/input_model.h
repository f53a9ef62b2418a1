// The inputs of one checked measurement: every element of every rank is a small integer "code" drawn from
// a hash of (seed, rank, index), so each rank can regenerate any rank's input and compute the expected
// result itself, independent of the library. A code maps to the element's bits through a table built per
// type and op, with ranges chosen so that expected results are exact or have a provable rounding bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf_types.h"
#include "strata/strata.h"

namespace strata::perf {

// How a collective combines inputs, which decides the value range (see README "Checking").
enum class InputPattern {
  kCopy,    // moved, never combined: a wide range, so misplaced data shows
  kSum,     // small integers: float sums stay exact where the type allows
  kAvg,     // like kSum, and integer sums do not overflow before the division
  kProd,    // +-1, and one rank per element contributes +-2: products never overflow
  kMinMax,  // a wide range; floats take quarter steps
  kGauss,   // float types: standard normal values (65536 quantiles), for quantized runs (-q)
};
InputPattern PatternFor(bool reduces, strataRedOp_t op);

class InputModel {
 public:
  InputModel(const TypeDesc& type, InputPattern pattern, int nranks, uint64_t seed);

  const TypeDesc& type() const { return type_; }
  InputPattern pattern() const { return pattern_; }
  int nranks() const { return nranks_; }

  int64_t Code(int rank, size_t index) const;
  // The element's bits (type width, zero-extended) and, for float types, its exact value.
  uint64_t Bits(int64_t code) const { return bits_[static_cast<size_t>(code - lo_)]; }
  double FloatValue(int64_t code) const { return values_[static_cast<size_t>(code - lo_)]; }

  // Writes `rank`'s input elements [0, count) to buf.
  void Fill(void* buf, size_t count, int rank) const;
  // Elements of buf[0, count) that no longer hold `rank`'s input.
  int64_t CountChangedInputs(const void* buf, size_t count, int rank) const;

 private:
  const TypeDesc& type_;
  InputPattern pattern_;
  int nranks_;
  uint64_t elementKey_;             // picks the rank that contributes +-2 under kProd
  std::vector<uint64_t> rankKeys_;  // one hash key per rank
  int64_t lo_ = 0;
  int64_t hi_ = 0;
  std::vector<uint64_t> bits_;
  std::vector<double> values_;
};

// The largest |value| of the kGauss pattern (its most extreme quantile, before rounding to the type).
double GaussPatternMaxAbs();

// Reads element i of a buffer of `size`-byte elements as zero-extended bits.
uint64_t LoadElementBits(const void* buf, size_t size, size_t i);
// The value a float type's bits hold (float, double and the narrow formats).
double FloatBitsToDouble(const TypeDesc& type, uint64_t bits);

}  // namespace strata::perf
