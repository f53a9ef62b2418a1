#include "algorithms/selector.h"

#include <algorithm>
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

namespace {
// The model prices the window algorithms' copies at the in-cache rate; measured, they lose to rd, rhd and the ring
// above kWindowAlgoSelectMaxBytes (docs/PERFORMANCE.md, "Algorithm selection"): their estimates rank nothing there,
// but where they copy in place at a per-byte cost the calibration measured (CostInputs::peerScale).
bool ModelRanks(const CostInputs& in, AlgoId id, CollKind kind, uint64_t bytes) {
  if (!IsWindowAlgo(id) || bytes <= kWindowAlgoSelectMaxBytes) return true;
  return in.peerScale > 0 && CopiesInPlace(in, GetAlgoInfo(id).name, kind, static_cast<double>(bytes));
}
}  // namespace

AlgoId AlgoSelector::evaluate(CollKind kind, uint64_t bytes) const {
  AlgoId best = DefaultAlgo(kind);
  double bestUs = -1;
  for (const AlgoInfo& a : AlgoTable()) {
    if (!a.implemented || !ModelRanks(in_, a.id, kind, bytes)) continue;
    const double t = estimateUs(a.id, kind, bytes);
    if (t < 0) continue;
    if (bestUs < 0 || t < bestUs) {
      best = a.id;
      bestUs = t;
    }
  }
  // Small allreduces are decided by times measured at init, which swing by up to 2x from one launch to the
  // next (ranks sharing cores, wake-ups) and put algorithms level that back to back are not (the calibration's
  // short blocks): the small-size algorithm (smallSizeAlgo) keeps them unless another's estimate beats
  // its own by a clear margin. The small allgathers and reduce-scatters on one host keep theirs outright: no call at
  // init measured them, and the model's per-byte terms there are other sizes' (rd's scale, measured at 128 KiB). So
  // do the allreduces up to 1 KiB on one host of 2 ranks, where the calibration times rd and oneshot within its own
  // spread of each other.
  AlgoId keep;
  bool outright = false;
  if (bytes <= kSmallAllReduceBytes && smallSizeAlgo(kind, bytes, &keep, &outright)) {
    const double keepUs = estimateUs(keep, kind, bytes);
    if (best != keep && keepUs >= 0 && (outright || bestUs * kSmallAllReduceMargin > keepUs)) best = keep;
  }
  return best;
}

bool AlgoSelector::smallSizeAlgo(CollKind kind, uint64_t bytes, AlgoId* keep, bool* outright) const {
  const bool fits = in_.nhosts == 1 && estimateUs(AlgoId::OneShot, kind, bytes) >= 0;
  *keep = AlgoId::OneShot;
  *outright = true;
  switch (kind) {
    case CollKind::AllReduce:
      if (fits && in_.nranks == 2 && bytes <= kTwoRankOneshotAllReduceBytes) return true;
      if (corePerRankWindowKeeps(kind, bytes)) {
        if (bytes > kCorePerRankOneshotAllReduceBytes && estimateUs(AlgoId::TwoShot, kind, bytes) >= 0)
          *keep = AlgoId::TwoShot;
        return true;
      }
      *outright = false;
      if (!fits || !oneHostOfThreeOrMore()) *keep = AlgoId::Rd;
      return true;
    case CollKind::AllGather:
      return fits && bytes <= kSmallAllGatherBytes;
    case CollKind::ReduceScatter:
      return fits;
    default:
      return false;
  }
}

bool AlgoSelector::corePerRankWindowKeeps(CollKind kind, uint64_t bytes) const {
  return kind == CollKind::AllReduce && bytes <= kSmallAllReduceBytes && oneHostOfThreeOrMore() &&
         in_.nranks <= kCorePerRankWindowMaxRanks && !in_.oversubscribed &&
         estimateUs(AlgoId::OneShot, kind, bytes) >= 0;
}

uint64_t ClassBytes(uint64_t bytes) {
  const int cls = SizeClass(bytes);
  return cls < 0 ? 0 : uint64_t{1} << cls;
}

std::pair<int, int> AlgoSelector::key(CollKind kind, uint64_t bytes) {
  return std::make_pair(static_cast<int>(kind), SizeClass(bytes));
}

AlgoId AlgoSelector::choose(CollKind kind, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key(kind, bytes));
  if (it != cache_.end()) return it->second.id;
  const AlgoId id = evaluate(kind, ClassBytes(bytes));
  cache_.emplace(key(kind, bytes), Choice{id, false});
  return id;
}

bool AlgoSelector::known(CollKind kind, uint64_t bytes, AlgoId* out, bool* measured) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(key(kind, bytes));
  if (it == cache_.end()) return false;
  *out = it->second.id;
  if (measured) *measured = it->second.measured;
  return true;
}

std::vector<AlgoId> AlgoSelector::candidates(CollKind kind, uint64_t bytes) const {
  const uint64_t at = ClassBytes(bytes);
  const AlgoId pick = evaluate(kind, at);
  std::vector<AlgoId> out = {pick};
  const double pickUs = estimateUs(pick, kind, at);
  // Rooted collectives are not timed: their leaves can run calls ahead of the root through the FIFOs, so a rank's
  // time per call does not show the collective's.
  if (kind == CollKind::Broadcast || kind == CollKind::Reduce) return out;
  if (pickUs < 0 || at == 0 || corePerRankWindowKeeps(kind, at)) return out;
  if (at < measureMinBytes()) {
    if (smallOverridesRd(kind, at, pick)) {
      out.push_back(AlgoId::Rd);
      // On one host of 2 ranks an allgather's or reduce-scatter's ring is one exchange of a rank's part, as rd's is: on
      // an AMD EPYC VM the reduce-scatter's was the best forced algorithm from 8 B to 4 KiB in four selector_perf jobs
      // of four, 1.03-1.08x faster than rd, and the allgather's at 8-32 B in one (docs/PERFORMANCE.md, "Twenty-eighth
      // session").
      if (kind != CollKind::AllReduce && in_.nhosts == 1 && estimateUs(AlgoId::Ring, kind, at) >= 0)
        out.push_back(AlgoId::Ring);
    }
    return out;
  }
  std::vector<std::pair<double, AlgoId>> close;
  std::vector<AlgoId> always;
  // A window algorithm the model chose above kWindowAlgoSelectMaxBytes was priced by the calibration's one timing of
  // twoshot against the ring (CostInputs::peerScale), the FIFO algorithms by its ring alone: a launch whose calibration
  // met the ring in a slow spell prices them all too high beside it. So the FIFO algorithm it estimates fastest is
  // timed beside it whatever the margin, as the window algorithms are timed beside a FIFO choice (timedWherever). On 2
  // ranks of an AMD EPYC VM one launch of six calibrated the 1 MiB ring at 290 us (80-162 in the others), kept twoshot
  // untimed at 1 MiB and ran it at 166 us, where the others timed and ran the ring, rd or rhd at 76-82
  // (docs/PERFORMANCE.md, "Twenty-ninth session").
  const bool besideWindow = IsWindowAlgo(pick) && at > kWindowAlgoSelectMaxBytes;
  std::pair<double, AlgoId> fifo = {-1, pick};  // the FIFO algorithm estimated fastest, beside a window choice
  for (const AlgoInfo& a : AlgoTable()) {
    if (!a.implemented || a.id == pick) continue;
    const double t = estimateUs(a.id, kind, at);
    if (t < 0) continue;
    if (timedWherever(a.id, kind, at)) {
      always.push_back(a.id);
      continue;
    }
    if (!ModelRanks(in_, a.id, kind, at) || !timedAsRival(a.id, kind, at, pickUs)) continue;
    if (t <= pickUs * kMeasureMargin)
      close.emplace_back(t, a.id);
    else if (besideWindow && !IsWindowAlgo(a.id) && (fifo.first < 0 || t < fifo.first))
      fifo = {t, a.id};
  }
  std::stable_sort(
      close.begin(), close.end(),
      [](const std::pair<double, AlgoId>& x, const std::pair<double, AlgoId>& y) { return x.first < y.first; });
  const bool fifoClose = std::any_of(close.begin(), close.end(),
                                     [](const std::pair<double, AlgoId>& c) { return !IsWindowAlgo(c.second); });
  if (fifo.first >= 0 && !fifoClose) close.insert(close.begin(), fifo);
  for (const auto& c : close)
    if (out.size() < kMeasureMaxCandidates) out.push_back(c.second);
  out.insert(out.end(), always.begin(), always.end());
  return out;
}

bool AlgoSelector::smallOverridesRd(CollKind kind, uint64_t bytes, AlgoId pick) const {
  // Across hosts the model's byte terms can beat the small-size margin where the link does not charge them: over 2
  // hosts x 2 ranks with tbf at 1 Gbit/s the model put hier_leader 1.26x under rd at 4 KiB (rd's 8 KiB per call
  // across at 0.11 GB/s), and rd ran 1.14-1.27x faster in three jobs of three (docs/PERFORMANCE.md, "Tenth
  // session"): a bucket that refills during each call lets those bytes through. The allgather and the reduce-scatter
  // too, which the calibration's small allreduce times do not price: over 2 hosts x 2 ranks at 10 Gbit/s the model
  // tied hier's two phases with rd's two exchanges on hop latencies and took hier from 16 B to 4 KiB, where rd or rhd
  // ran 1.10-1.28x faster (docs/PERFORMANCE.md, "Seventeenth session").
  // On one host of 2 ranks, the classes oneshot keeps outright (smallSizeAlgo): there the two exchange once each, and
  // which is faster differs by machine. On an Intel VM oneshot's 2 KiB allreduce ran 0.78-0.84 us back to back against
  // rd's 1.13-1.28; on an AMD EPYC VM rd's ran 0.45-0.63 against oneshot's 0.75-0.89, and in a selector_perf job rd
  // was the best forced algorithm from 8 B to 2 KiB, oneshot at 1.23x and 1.28x its time at 1 and 2 KiB
  // (docs/PERFORMANCE.md, "Twenty-eighth session").
  const bool exchanges = kind == CollKind::AllReduce || kind == CollKind::AllGather || kind == CollKind::ReduceScatter;
  if (!exchanges || bytes > kSmallAllReduceBytes || pick == AlgoId::Rd || estimateUs(AlgoId::Rd, kind, bytes) < 0)
    return false;
  if (in_.nhosts > 1) return true;
  AlgoId keep;
  bool outright = false;
  return in_.nranks == 2 && smallSizeAlgo(kind, bytes, &keep, &outright) && outright && pick == keep;
}

double AlgoSelector::timedFloorUs(AlgoId id, CollKind kind, uint64_t bytes) const {
  // With several ranks on a host, each of them sends its whole vector across in rd's exchange between hosts: a host's
  // link carries ranks-per-host times the vector, where hier and hier_leader send it once. A timing of a few calls
  // among other candidates' meets a link's burst allowance that back-to-back calls use up: over 2 hosts x 2 ranks at
  // 10 Gbit/s, seven launches of eighteen timed rd at 512 KiB, at 803-1142 us (803: its 1 MiB per host across a
  // 1.25 GB/s link in less time than the link takes) against hier_leader's 752-1288, and three chose it, where back
  // to back it ran 1.41x slower than hier_leader (docs/PERFORMANCE.md, "Eleventh session"). Those bytes at the
  // calibrated link rate bound what rd's timing may show.
  // Over a link-bound network (CostInputs::interLinkBound) the calibrated rate is the link's own, and the bound holds
  // with one rank per host too, counting every exchange between hosts: log2 of the hosts of them, each rank's whole
  // vector in each. Over 4 hosts x 1 rank at 1 Gbit/s a launch timed rd at 64 KiB under rhd's 831 us, where its two
  // exchanges' bytes take 1049 us on the link and back to back it ran 1103, 1.33x rhd's time (docs/PERFORMANCE.md,
  // "Sixteenth session"). Elsewhere the calibrated rate is what the 1 MiB ring reached, not always the link's (over
  // 2 hosts x 2 ranks at 10 Gbit/s, 0.52 GB/s in some launches: kLightMeasureBudgetUs): one rank per host keeps no
  // bound there, and several count one exchange, as before.
  const double perHost = static_cast<double>(in_.nranks) / in_.nhosts;  // ranks of a host, on average
  if (id != AlgoId::Rd || kind != CollKind::AllReduce || in_.nhosts < 2 || !(in_.inter.bandwidthGBs > 0) ||
      (perHost <= 1 && !in_.interLinkBound))
    return 0;
  int exchanges = 1;
  if (in_.interLinkBound)
    while ((2 << exchanges) <= in_.nhosts) ++exchanges;  // floor(log2(hosts)), at least 1
  return exchanges * perHost * static_cast<double>(ClassBytes(bytes)) / (in_.inter.bandwidthGBs * 1e3);
}

bool AlgoSelector::timedAsRival(AlgoId id, CollKind kind, uint64_t bytes, double pickUs) const {
  // A rival whose timing would be raised past the model's choice's estimate is not worth the budget. Smaller classes
  // keep rd: at 16 KiB over 2 hosts x 2 ranks it ran level with hier_leader, and with rd left out there, rhd took its
  // place in the timing and won it in one job of five, 1.87x slower than hier_leader back to back.
  return timedFloorUs(id, kind, bytes) <= pickUs;
}

uint64_t AlgoSelector::measureMinBytes() const {
  if (oneHostOfThreeOrMore()) return kOneHostMeasureMinBytes;
  return in_.nhosts > 1 && !in_.interLinkBound ? kNetworkMeasureMinBytes : kMeasureMinBytes;
}

bool AlgoSelector::timedWherever(AlgoId id, CollKind kind, uint64_t bytes) const {
  // Above kWindowAlgoSelectMaxBytes the model's estimates do not rank the window algorithms (see ModelRanks: too low on
  // 2 ranks; on 4 ranks of the development VM oneshot's came out at 2.3-3.0x rhd's at 512 KiB, where the two ran within
  // 1.2x of each other), so they are timed wherever they fit, up to the largest class the allreduce's twoshot fits.
  // Above it only oneshot is left, reading every peer's whole buffer: at 1 MiB it ran 1.04-2.06x the best forced
  // algorithm in every table on 2 and 4 ranks, and timing it took the budget from the model's close rivals (4 ranks: rd
  // the model's choice, the budget leaves room for two of rd, rhd and oneshot, and rd ran 1.14x and 1.21x slower than
  // rhd in two jobs of three; docs/PERFORMANCE.md, "Tenth session"). Allgather and reduce-scatter run twoshot as
  // oneshot, so for them oneshot alone is timed, wherever it fits: an allgather's window holds one rank's input, and on
  // 4 ranks the two ran 1.16-1.35x faster than the rd the model kept at 1-4 MiB, where they were not timed
  // (docs/PERFORMANCE.md, "Seventeenth session"); timing both left the 4 MiB class over the budget.
  if (IsWindowAlgo(id)) {
    // Each where the model gives it an estimate (oneshot where it fits: the model offers twoshot for the allreduce
    // only), but the allreduce's oneshot only as far as its twoshot's window reaches: where the ranks copy in place
    // (CostInputs::peerAccess) twoshot reaches every size, reading 1/p of each peer's buffer where oneshot reads all.
    const uint64_t at = ClassBytes(bytes);
    if (at <= kWindowAlgoSelectMaxBytes || estimateUs(id, kind, at) < 0) return false;
    return kind != CollKind::AllReduce || id != AlgoId::OneShot || 2 * at <= in_.windowBytes;
  }
  // Nor does it rank hier_leader across hosts: over 2 hosts x 2 ranks at 10 Gbit/s it ran 1.45-1.62x faster than the
  // hier or ring the selector kept at 256 KiB - 1 MiB, where it was often not among the timed candidates
  // (docs/PERFORMANCE.md, "Eighth session").
  return id == AlgoId::HierLeader && in_.nhosts > 1;
}

uint64_t InPlaceWarmTimingMaxBytes(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce:
      return kInPlaceWarmAllReduceMaxBytes;
    case CollKind::ReduceScatter:
      return kInPlaceWarmReduceScatterMaxBytes;
    case CollKind::AllGather:
      return kInPlaceWarmAllGatherMaxBytes;
    default:
      return 0;
  }
}

double AlgoSelector::timedScale(AlgoId id, CollKind kind, uint64_t bytes, const std::vector<AlgoId>& candidates,
                                const std::vector<double>& us, ScaleWhy* why) const {
  ScaleWhy none;
  if (!why) why = &none;
  *why = ScaleWhy::kNone;
  auto scaled = [why](ScaleWhy because, double scale) {
    *why = because;
    return scale;
  };
  auto timedBeside = [&](auto matches) {
    for (size_t i = 0; i < candidates.size() && i < us.size(); ++i)
      if (matches(candidates[i]) && us[i] > 0) return true;
    return false;
  };
  auto timedBesideOne = [&](AlgoId other) { return timedBeside([other](AlgoId c) { return c == other; }); };
  // Every collective the window algorithms serve where ranks share cores: the timing's warm buffers favour the FIFO
  // algorithms alike (reduce-scatter on 4 ranks at 512 KiB: the ring timed at 0.73-0.89x oneshot's time, then 1.39x
  // slower back to back through the perf tools' moving buffers; docs/PERFORMANCE.md, "Seventeenth session"). With a
  // core per rank, the allreduce while twoshot goes through the window (see kWarmTimingScale). Either way the
  // allreduce's only while twoshot goes through the window: in place its timing on one buffer reaches warm pages by
  // its system calls, which favours twoshot itself (as kInPlaceWarmTimingScale counts on 2 ranks). With 4 ranks on 2
  // cores, where twoshot goes in place from 256 KiB, the scale had it chosen at 512 KiB at 1.13-1.24x rhd's time in
  // three full local4 jobs; in 16 selector_perf jobs of 64 KiB - 4 MiB the choices over 1.10x fell from 20 to 13, a
  // window algorithm's at 256 KiB - 1 MiB from 7 to 0 (docs/PERFORMANCE.md, "Thirty-first session").
  const uint64_t cb = ClassBytes(bytes);
  const bool twoshotInPlace = kind == CollKind::AllReduce && CopiesInPlace(in_, "twoshot", kind, cb);
  // The allreduce's small classes where a host runs few ranks a CPU (see kWarmTimingSmallBelowBytes).
  const bool smallFewPerCpu = kind == CollKind::AllReduce && in_.oversubscribed && cb < kWarmTimingSmallBelowBytes &&
                              in_.ranksPerCpu <= kWarmTimingSmallMaxRanksPerCpu;
  const bool warmFavoured =
      !twoshotInPlace && !smallFewPerCpu &&
      (in_.oversubscribed ? AlgoServes(AlgoId::OneShot, kind) : kind == CollKind::AllReduce);
  if (warmFavoured && oneHostOfThreeOrMore() && !IsWindowAlgo(id) && timedBeside(IsWindowAlgo))
    return scaled(ScaleWhy::kBesideWindows, kWarmTimingScale);
  // On 2 ranks, the plan that goes in place, up to its collective's size (see kInPlaceWarmTimingScale).
  const AlgoId inPlace = kind == CollKind::AllReduce ? AlgoId::TwoShot : AlgoId::OneShot;
  if (in_.nranks == 2 && id == inPlace && cb <= InPlaceWarmTimingMaxBytes(kind) &&
      CopiesInPlace(in_, GetAlgoInfo(id).name, kind, cb) && timedBeside([id](AlgoId other) { return other != id; }))
    return scaled(ScaleWhy::kInPlace, kInPlaceWarmTimingScale);
  // On one host of 2 ranks, rd (and the allgather's or reduce-scatter's ring) beside the oneshot that keeps a small
  // class (smallOverridesRd): they take the class by the small sizes' margin only (see kTwoRankOneshotAllReduceBytes),
  // the allreduce's up to kSmallAllReduceMarginMaxBytes.
  const uint64_t marginMax = kind == CollKind::AllReduce ? kSmallAllReduceMarginMaxBytes : kSmallAllReduceBytes;
  if (in_.nhosts == 1 && in_.nranks == 2 && (id == AlgoId::Rd || id == AlgoId::Ring) && cb <= marginMax &&
      timedBesideOne(AlgoId::OneShot))
    return scaled(ScaleWhy::kBesideSmallOneshot, kSmallAllReduceMargin);
  if (kind != CollKind::AllReduce) return 1.0;
  // rd beside rhd where ranks share cores: the warm buffers hide rd's extra bytes (see kRdBesideRhdScale).
  if (id == AlgoId::Rd && in_.oversubscribed && oneHostOfThreeOrMore() && cb >= kRdBesideRhdMinBytes &&
      timedBesideOne(AlgoId::Rhd))
    return scaled(ScaleWhy::kRdBesideRhd, kRdBesideRhdScale);
  if (id == AlgoId::Hier && in_.nhosts > 1 && in_.ranksPerHost == 2 && timedBesideOne(AlgoId::HierLeader))
    return scaled(ScaleWhy::kBesideLeader, kHierBesideLeaderScale);
  return 1.0;
}

AlgoId AlgoSelector::settle(CollKind kind, uint64_t bytes, const std::vector<AlgoId>& candidates,
                            const std::vector<double>& us) {
  // A timed figure, at least the candidate's floor, times its scale.
  auto counted = [&](size_t i) {
    return std::max(us[i], timedFloorUs(candidates[i], kind, bytes)) *
           timedScale(candidates[i], kind, bytes, candidates, us);
  };
  AlgoId best = candidates.empty() ? evaluate(kind, ClassBytes(bytes)) : candidates[0];
  double bestUs = !us.empty() && us[0] > 0 ? counted(0) / kMeasureTie : -1;
  for (size_t i = 1; i < candidates.size() && i < us.size(); ++i) {
    if (us[i] <= 0) continue;
    const double t = counted(i);
    if (bestUs < 0 || t < bestUs) {
      best = candidates[i];
      bestUs = t;
    }
  }
  std::lock_guard<std::mutex> lock(mu_);
  cache_[key(kind, bytes)] = Choice{best, true};
  return best;
}

void AlgoSelector::record(CollKind kind, uint64_t bytes, AlgoId id) {
  std::lock_guard<std::mutex> lock(mu_);
  cache_[key(kind, bytes)] = Choice{id, true};
}

bool AlgoSelector::measured(CollKind kind, uint64_t bytes) {
  AlgoId id;
  bool m = false;
  return known(kind, bytes, &id, &m) && m;
}

}  // namespace strata
