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

// The largest |got - expected| accepted for a float sum (average: `average` true) of values whose
// absolute values add up to `absSum`. 0 where every order of summation is exact. See README "Checking".
double FloatSumTolerance(const TypeDesc& type, int nranks, double absSum, bool average);

}  // namespace strata::perf
