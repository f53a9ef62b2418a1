// Compares a collective's output with the result computed from every rank's regenerated input: exact for
// integers, copies, min, max and prod; within a rounding bound for float sums and averages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "input_model.h"
#include "strata/strata.h"

namespace strata::perf {

// Where one output element comes from.
struct ElementSource {
  enum class Kind { kReduce, kCopy, kSkip };
  Kind kind;
  int rank;      // kCopy: whose input
  size_t index;  // the input element (of every rank for kReduce)

  static ElementSource Reduce(size_t index) { return {Kind::kReduce, 0, index}; }
  static ElementSource Copy(int rank, size_t index) { return {Kind::kCopy, rank, index}; }
  static ElementSource Skip() { return {Kind::kSkip, 0, 0}; }
};

// Output elements out[0, count) that differ from what `source` says beyond the bound for the type and op.
int64_t CountWrongElements(const InputModel& model, strataRedOp_t op, const void* out, size_t count,
                           const std::function<ElementSource(size_t)>& source);

// A quantized call's output (-q): elements whose error exceeds the spec's worst case, and the sums of squared
// errors and squared expected values (for the relative L2 error) against a float64 reduction.
struct QuantCheck {
  int64_t wrong = 0;
  double errSq = 0;
  double refSq = 0;
};
// The worst error one quantization of a value makes, as a fraction of the largest magnitude in its block:
// half a step of the format at that magnitude (a whole step with stochastic rounding).
double QuantUnitError(const strataQuantOptions_t& spec);
// Each output element may be off by `unit` times the largest magnitude of every quantized value that reaches it:
// each rank's contribution (at most max|input| each) and the reduced result (at most n x max|input|), plus the
// rounding of the output to its type. `maxAbs` bounds every input's magnitude.
QuantCheck CheckQuantizedElements(const InputModel& model, strataRedOp_t op, const void* out, size_t count,
                                  const std::function<ElementSource(size_t)>& source, double unit, double maxAbs);

// The largest |got - expected| accepted for a float sum (average: `average` true) of values whose
// absolute values add up to `absSum`. 0 where every order of summation is exact. See README "Checking".
double FloatSumTolerance(const TypeDesc& type, int nranks, double absSum, bool average);

}  // namespace strata::perf
