// The communicator's choices decided on the calls themselves: a size class's candidates taking turns on its first
// calls (ClassTrial), and the in-place plan against the selector's on buffers the peers reach (InPlaceTrial).
#include <algorithm>

#include "algorithms/algorithms.h"
#include "core/communicator.h"
#include "core/log.h"
#include "core/plan_cache.h"
#include "exec/host_reduce.h"
#include "transport/shm/huge_pages.h"
#include "transport/shm/shared_buffers.h"

namespace strata {

bool Communicator::decidesOnCalls(const TimingPattern& pattern) const {
  if (!settings_.tune || topology_.nhosts() != 1) return false;
  return pattern.rounds == 0;
}

Communicator::ClassTrial* Communicator::classTrialOf(const CollDesc& desc) {
  const auto it = classTrials_.find({static_cast<int>(desc.kind), SizeClass(SelectorBytes(desc, nranks_))});
  return it == classTrials_.end() ? nullptr : &it->second;
}

bool Communicator::classTrialKnown(CollKind kind, uint64_t bytes) const {
  const auto it = classTrials_.find({static_cast<int>(kind), SizeClass(bytes)});
  return it != classTrials_.end() && it->second.trial.decided();
}

Communicator::ClassTrial* Communicator::startClassTrial(const CollDesc& desc, const std::vector<AlgoId>& candidates) {
  const uint64_t bytes = SelectorBytes(desc, nranks_);
  const int n = static_cast<int>(std::min<size_t>(candidates.size(), CallTrial::kMaxPlans));
  ClassTrial t{desc.kind, ClassBytes(bytes), std::vector<AlgoId>(candidates.begin(), candidates.begin() + n),
               CallTrial(n, kClassTrialTurns)};
  ClassTrial& in =
      classTrials_.insert_or_assign({static_cast<int>(desc.kind), SizeClass(bytes)}, std::move(t)).first->second;
  if (LogEnabled(LogLevel::INFO, TUNING)) {
    std::string names;
    for (AlgoId id : in.candidates) names += std::string(names.empty() ? "" : ", ") + GetAlgoInfo(id).name;
    STRATA_LOG(INFO, TUNING,
               "%s, size class %d (%llu B): %s timed on the class's next %d calls (the model's choice %s)",
               CollKindName(desc.kind), SizeClass(bytes), static_cast<unsigned long long>(in.classBytes), names.c_str(),
               in.trial.calls(), GetAlgoInfo(in.candidates[0]).name);
  }
  return &in;
}

Status Communicator::trialPlan(const CollDesc& desc, AlgoId id, CachedPlan** out) {
  const auto key = std::make_pair(PlanKeyOf(desc), static_cast<int>(id));
  auto it = trialPlans_.find(key);
  if (it == trialPlans_.end()) {
    if (trialPlans_.size() > 64) trialPlans_.clear();
    it = trialPlans_.emplace(key, CachedPlan{BuildPlanWith(id, desc, geo_), nullptr}).first;
    STRATA_CHECK(ResolveCached(trialPlans_, it, this));
  }
  *out = &it->second;
  return Status::Ok();
}

Status Communicator::settleClassTrial(const CollDesc& desc, ClassTrial* t) {
  const std::vector<double> mine = t->trial.mine();
  const size_t n = mine.size();
  std::vector<double> all;
  STRATA_CHECK(GatherOverRanks(geo_, planRunner(), mine, &all));
  std::vector<double> mean(n, 0.0);
  for (int r = 0; r < nranks_; ++r)
    for (size_t p = 0; p < n; ++p) mean[p] += all[r * n + p] / nranks_;
  // The model's choice stays unless another ran faster by more than the timing's tie.
  std::vector<double> counted = mean;
  counted[0] /= kMeasureTie;
  t->trial.settle(counted);
  const AlgoId winner = t->candidates[t->trial.winner()];
  selector_.record(t->kind, t->classBytes, winner);
  // The class's cached plans were built with its earlier choice.
  for (auto it = plans_.begin(); it != plans_.end();) {
    const PlanKey& k = it->first;
    CollDesc d;
    d.kind = static_cast<CollKind>(std::get<0>(k));
    d.count = std::get<1>(k);
    d.dtype = static_cast<strataDataType_t>(std::get<2>(k));
    const bool same = d.kind == t->kind && SizeClass(SelectorBytes(d, nranks_)) == SizeClass(t->classBytes);
    it = same ? plans_.erase(it) : std::next(it);
  }
  if (LogEnabled(LogLevel::INFO, TUNING)) {
    std::string times;
    char buf[64];
    for (size_t p = 0; p < n; ++p) {
      snprintf(buf, sizeof buf, "%s%s %.1f us", p ? ", " : "", GetAlgoInfo(t->candidates[p]).name, mean[p]);
      times += buf;
    }
    STRATA_LOG(INFO, TUNING,
               "%s, size class %d (%llu B): timed on the calls %s (each rank's median of %d counted calls, per %llu B, "
               "the mean over the ranks): %s (the model's choice %s)",
               CollKindName(desc.kind), SizeClass(t->classBytes), static_cast<unsigned long long>(t->classBytes),
               times.c_str(), t->trial.counted(), static_cast<unsigned long long>(t->classBytes),
               GetAlgoInfo(winner).name, GetAlgoInfo(t->candidates[0]).name);
  }
  return Status::Ok();
}

Status Communicator::inPlaceBufferPlan(const CollDesc& desc, const void* send, const void* recv, CachedPlan* cached,
                                       CachedPlan** out, InPlaceTrial** trial, bool* settled) {
  *out = cached;
  *trial = nullptr;
  if (settled) *settled = true;
  AlgoId forced;
  const uint64_t esize = DataTypeSize(desc.dtype);
  const uint64_t sendBytes = SendElems(desc, nranks_) * esize, recvBytes = RecvElems(desc, nranks_) * esize;
  const bool inPlaceKind =
      desc.kind == CollKind::AllReduce || desc.kind == CollKind::AllGather || desc.kind == CollKind::ReduceScatter;
  if (!geo_.peerAccess || !inPlaceKind) return Status::Ok();
  // The same on every rank: the plan, the geometry, the call's shape and the forced algorithms.
  const bool agree = cached->plan.peerElems == 0 && !settings_.forced.get(desc.kind, &forced) &&
                     SelectorBytes(desc, nranks_) >= kSharedBufferAgreeMinBytes;
  if (cached->plan.peerElems == 0 && !agree) return Status::Ok();  // no peer reaches these buffers
  // A buffer a peer maps (strataMemAlloc), or one on huge pages, which cross-memory attach reaches without pinning
  // page after page (counting this call towards its collapse either way).
  const int after = settings_.hugePagesAfter;
  auto reachable = [after](const void* p, uint64_t bytes, uint64_t maxBytes) {
    SharedRegion r;
    if (FindSharedBuffer(p, &r)) return reinterpret_cast<uint64_t>(p) + bytes <= r.base + r.bytes;
    return HugePagesFor(p, bytes, after, maxBytes);
  };
  const uint64_t s = reinterpret_cast<uint64_t>(send), v = reinterpret_cast<uint64_t>(recv);
  const bool inPlace = s < v + recvBytes && v < s + sendBytes;
  bool sendReachable = false, recvReachable = false;
  if (inPlace) {  // one buffer, the larger range, counted once
    const bool sendOuter = sendBytes >= recvBytes;
    sendReachable = recvReachable =
        reachable(sendOuter ? send : recv, sendOuter ? sendBytes : recvBytes, kHugePageMaxInPlaceBytes);
  } else {
    sendReachable = reachable(send, sendBytes, kHugePageMaxBytes);
    recvReachable = reachable(recv, recvBytes, kHugePageMaxBytes);
  }
  if (settled) {
    // Where a buffer could still move, later calls will find it on other pages than this one did.
    auto stays = [after](uint64_t bytes, uint64_t maxBytes) {
      return after == 0 || bytes < kHugePageBytes || bytes > maxBytes || !HugePagesCollapse();
    };
    const uint64_t maxBytes = inPlace ? kHugePageMaxInPlaceBytes : kHugePageMaxBytes;
    *settled = (sendReachable || stays(inPlace ? std::max(sendBytes, recvBytes) : sendBytes, maxBytes)) &&
               (recvReachable || stays(inPlace ? std::max(sendBytes, recvBytes) : recvBytes, maxBytes));
  }
  if (!agree) return Status::Ok();
  const bool mine[3] = {sendReachable && recvReachable, inPlace, !inPlace};
  bool all[3] = {false, false, false};
  STRATA_CHECK(allRanksAgree(mine, all, 3));
  if (!all[0]) return Status::Ok();
  const PlanKey key = PlanKeyOf(desc);
  auto it = inPlacePlans_.find(key);
  if (it == inPlacePlans_.end()) {
    if (inPlacePlans_.size() > 64) inPlacePlans_.clear();
    const AlgoId id = desc.kind == CollKind::AllReduce ? AlgoId::TwoShot : AlgoId::OneShot;
    Plan plan = BuildPlanWith(id, desc, geo_);
    if (plan.peerElems == 0) return Status::Ok();  // it does not go in place for this shape
    it = inPlacePlans_.emplace(key, CachedPlan{std::move(plan), nullptr}).first;
    STRATA_LOG(INFO, TUNING,
               "%s of %llu elements: every rank's buffers from strataMemAlloc or on huge pages: %s in place%s %s",
               CollKindName(desc.kind), static_cast<unsigned long long>(desc.count), it->second.plan.algorithm.c_str(),
               settings_.tune ? ", timed on the calls against" : ", not", cached->plan.algorithm.c_str());
    STRATA_CHECK(ResolveCached(inPlacePlans_, it, this));
  }
  if (!settings_.tune) {
    *out = &it->second;
    return Status::Ok();
  }
  // Every rank keys the trial alike: by what all of them agreed, not by its own placement.
  enum Placement { kOutOfPlace = 0, kAllInPlace = 1, kMixed = 2 };
  const int placement = all[1] ? kAllInPlace : all[2] ? kOutOfPlace : kMixed;
  if (inPlaceTrials_.size() > 128) inPlaceTrials_.clear();
  InPlaceTrial& t = inPlaceTrials_[{key, placement}];
  t.begin();
  if (t.next() == InPlaceTrial::kInPlace) *out = &it->second;
  if (!t.decided()) *trial = &t;
  return Status::Ok();
}

Status Communicator::settleTrial(const CollDesc& desc, const std::string& selectors, InPlaceTrial* trial) {
  const std::array<double, 2> mine = trial->mine();
  std::vector<double> all;
  STRATA_CHECK(GatherOverRanks(geo_, planRunner(), {mine[0], mine[1]}, &all));
  std::array<double, 2> summed{0, 0};
  for (int r = 0; r < nranks_; ++r)
    for (int p = 0; p < 2; ++p) summed[p] += all[2 * r + p];
  trial->settle(summed);
  const auto it = inPlacePlans_.find(PlanKeyOf(desc));
  const std::string inPlace = it == inPlacePlans_.end() ? "the in-place plan" : it->second.plan.algorithm;
  const bool won = trial->next() == InPlaceTrial::kInPlace;
  STRATA_LOG(INFO, TUNING,
             "%s of %llu elements on buffers peers reach: %s in place %.1f us, %s %.1f us (each rank's median of %d "
             "counted calls, summed over the ranks): %s from now on",
             CollKindName(desc.kind), static_cast<unsigned long long>(desc.count), inPlace.c_str(),
             summed[InPlaceTrial::kInPlace], selectors.c_str(), summed[InPlaceTrial::kSelectors],
             InPlaceTrial::kCallsPerPlan, won ? inPlace.c_str() : selectors.c_str());
  return Status::Ok();
}

}  // namespace strata
