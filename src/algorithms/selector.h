// The selector: for a collective and a size, the cheapest implemented algorithm of the table under
// the cost model, cached per (collective, size class). Every rank builds it from the same inputs, so
// every rank picks the same algorithm.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "algorithms/algorithm_table.h"
#include "algorithms/cost_model.h"

namespace strata {

// Size classes are centred on powers of two: class k holds sizes within a factor sqrt(2) of 2^k
// (k = log2 rounded to the nearest integer); the empty buffer is class -1.
int SizeClass(uint64_t bytes);

class AlgoSelector {
 public:
  AlgoSelector() = default;
  explicit AlgoSelector(const CostInputs& in) : in_(in) {}

  const CostInputs& inputs() const { return in_; }
  // New inputs; forgets every cached choice.
  void reset(const CostInputs& in);
  // The algorithm for `kind` on `bytes` (the whole vector, as EstimateUs counts it). The choice is
  // made once per size class, at its power of two, so it does not depend on the order of calls.
  AlgoId choose(CollKind kind, uint64_t bytes);
  // Estimated microseconds of `id` (negative when it does not serve this collective or shape).
  double estimateUs(AlgoId id, CollKind kind, uint64_t bytes) const;

 private:
  AlgoId evaluate(CollKind kind, uint64_t bytes) const;

  CostInputs in_;
  std::mutex mu_;
  std::map<std::pair<int, int>, AlgoId> cache_;
};

// The bytes the cost model counts for a call (see EstimateUs): the whole vector, so that allgather's
// and reduce-scatter's per-rank counts and alltoall's per-peer count are multiplied by the ranks.
// The selector offers oneshot and twoshot only up to this size (they can still be forced up to the window).
constexpr uint64_t kWindowAlgoSelectMaxBytes = 8 << 10;

uint64_t SelectorBytes(const CollDesc& desc, int nranks);

// Up to this size an allreduce runs rd unless another algorithm's estimate is below rd's divided by the margin.
constexpr uint64_t kSmallAllReduceBytes = 4 << 10;
constexpr double kSmallAllReduceMargin = 1.25;

// What serves `kind` when the model finds nothing: the foundation's ring, chain or pairwise.
AlgoId DefaultAlgo(CollKind kind);

}  // namespace strata
