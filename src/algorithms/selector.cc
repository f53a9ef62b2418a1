#include "algorithms/selector.h"

#include <cmath>

#include "exec/host_reduce.h"

namespace strata {

int SizeClass(uint64_t bytes) {
  if (bytes == 0) return -1;
  return static_cast<int>(std::lround(std::log2(static_cast<double>(bytes))));
}

uint64_t SelectorBytes(const CollDesc& desc, int nranks) {
  uint64_t bytes = desc.count * DataTypeSize(desc.dtype);
  switch (desc.kind) {
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AlltoAll: return bytes * static_cast<uint64_t>(nranks);
    default: return bytes;
  }
}

void AlgoSelector::reset(const CostInputs& in) {
  std::lock_guard<std::mutex> lock(mu_);
  in_ = in;
  cache_.clear();
}

AlgoId DefaultAlgo(CollKind kind) {
  switch (kind) {
    case CollKind::Broadcast:
    case CollKind::Reduce: return AlgoId::Chain;
    case CollKind::AlltoAll: return AlgoId::Pairwise;
    default: return AlgoId::Ring;
  }
}

double AlgoSelector::estimateUs(AlgoId id, CollKind kind, uint64_t bytes) const {
  if (!AlgoServes(id, kind)) return -1;
  return EstimateUs(GetAlgoInfo(id).name, kind, bytes, in_);
}

AlgoId AlgoSelector::evaluate(CollKind kind, uint64_t bytes) const {
  AlgoId best = DefaultAlgo(kind);
  double bestUs = -1;
  for (const AlgoInfo& a : AlgoTable()) {
    if (!a.implemented) continue;
    // The model prices the window algorithms' copies at the in-cache rate; measured, they lose to rd, rhd and
    // the ring above this size (docs/PERFORMANCE.md, "Algorithm selection"): offered below it only.
    if ((a.id == AlgoId::OneShot || a.id == AlgoId::TwoShot) && bytes > kWindowAlgoSelectMaxBytes) continue;
    const double t = estimateUs(a.id, kind, bytes);
    if (t < 0) continue;
    if (bestUs < 0 || t < bestUs) {
      best = a.id;
      bestUs = t;
    }
  }
  // Small allreduces are decided by times measured at init, which swing by up to 2x from one launch to the
  // next (ranks sharing cores, wake-ups); in steady state rd was the fastest or within 10% of it from 8 B
  // to 4 KiB on every shape measured (docs/PERFORMANCE.md). Another algorithm takes over only when its
  // estimate beats rd's by a clear margin.
  if (kind == CollKind::AllReduce && bytes <= kSmallAllReduceBytes && best != AlgoId::Rd) {
    const double rd = estimateUs(AlgoId::Rd, kind, bytes);
    if (rd >= 0 && bestUs * kSmallAllReduceMargin > rd) best = AlgoId::Rd;
  }
  return best;
}

AlgoId AlgoSelector::choose(CollKind kind, uint64_t bytes) {
  const int cls = SizeClass(bytes);
  std::lock_guard<std::mutex> lock(mu_);
  const auto key = std::make_pair(static_cast<int>(kind), cls);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  const AlgoId id = evaluate(kind, cls < 0 ? 0 : uint64_t{1} << cls);
  cache_.emplace(key, id);
  return id;
}

}  // namespace strata
