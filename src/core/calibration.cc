#include "core/calibration.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "core/deadline.h"
#include "exec/host_reduce.h"
#include "exec/slot_store_tuner.h"

namespace strata {

namespace {

// Defaults when nothing is measured: this class of VM's shared memory and a 10 Gbit/s network.
constexpr LinkCost kDefaultShm{1.0, 5.0};
constexpr LinkCost kDefaultNet{30.0, 1.25};
constexpr uint64_t kLargeBytes = 1 << 20;
// On two ranks of one host, rd and the ring are timed at this in-cache size too: how the two compare there changes
// with the machine's state (docs/PERFORMANCE.md, "Algorithm selection": on the development VM the ring took 1.06-1.32x
// rd's time at 64-256 KiB while the VM was fast, 0.94-1.06x while it was 3.5x slower).
constexpr uint64_t kMidBytes = 128 << 10;
constexpr double kOutOfCacheRecursiveScale = 5.0 / 3.0;
// Between hosts over a link-bound network, from 2 MiB on (kInterHostLargeBytes): rhd's least per-byte scale against
// the ring's (see below).
constexpr double kInterHostRecursiveScale = 1.20;
constexpr uint64_t kInterHostLargeBytes = 2 * kLargeBytes;
// Between hosts over a faster network, rhd and the ring are timed at this size as well, and rhd's scale there holds
// from it on (see below). Two rounds, not lined up (the 1 MiB calls before them leave the ranks in step; the lower of
// the two decides): at 10 Gbit/s over 4 namespaces of the development VM a call of either took 8.7-10.4 ms, and
// lined up first the six calls took 71-85 ms of a calibration of 132-135.
constexpr uint64_t kInterHostScaleBytes = 4 * kLargeBytes;
constexpr int kInterHostScaleRounds = 2;
// A 1 MiB ring allreduce that takes this long between hosts is its bytes on the link: 4 ranks' bytes alone take 12.6 ms
// at 1 Gbit/s, while at 10 Gbit/s (1.3 ms of bytes) the development VM's calibration timed the call at 1.9-6.9 ms.
constexpr double kLongCallUs = 10000;
// rd's and rhd's least per-byte scale, at every size, where the 1 MiB ring call is link-bound (see below).
constexpr double kLinkBoundRecursiveScale = 1.10;
// Small calls: rounds in which every kind runs one untimed call, then two timed back to back as one block.
constexpr int kSmallRounds = 6;
constexpr int kSmallBlock = 2;
// On one host, the calibration's rounds after the first, as many as fit a budget by the first round's time (the median
// over the ranks), between a least and the counts above. On a host with a core per rank every round fits (16 vCPUs, 8
// ranks: the whole calibration in 11.8 ms), and on 2 and 4 ranks of the 2-core development VM too (a round of small
// calls 0.6-1.0 ms on 4 ranks, of 1 MiB calls 1.6-2.3 ms); but with 8 ranks on its 2 cores a round took 3.4-7.5 ms and
// 5-8 ms, and the calibration 66-97 ms (docs/PERFORMANCE.md, "Fourteenth session"). There the 1 MiB calls are not
// lined up first: they follow the small calls, which leave the ranks in step, and their first round was not the slow
// one (8 ranks: in a printout of every rank's three rounds over three launches it was often the fastest). What that
// and the budgets changed on the VM ("Fifteenth session"): rhd's per-byte scale came out at 0.55-1.33 on 4 ranks in
// five launches (0.71-1.00 in six before) and 0.84-1.15 on 8 (0.58-0.81), while the 4-rank tables kept every choice
// within 1.10x pooled.
constexpr double kSmallCallsBudgetUs = 8000;
constexpr int kSmallMinRounds = 2;  // of two rounds the lower decides: a slow start's first round does not
constexpr double kLargeCallsBudgetUs = 10000;
constexpr int kLargeMinRounds = 1;
// What a small allreduce is timed with, beside the ring: the algorithms the selector may pick for small sizes.
constexpr AlgoId kSmallCandidates[] = {AlgoId::Direct,  AlgoId::Rd,   AlgoId::Tree,      AlgoId::OneShot,
                                       AlgoId::TwoShot, AlgoId::Hier, AlgoId::HierLeader};
// Rounds of the slot-store probe's 1 MiB rings (a block of two calls with each kind of store per round).
constexpr int kSlotStoreRounds = 2;
constexpr int kLargeRounds = 3;  // rounds of 1 MiB calls (one timed call per kind) and of 128 KiB calls
// Rounds of a size class's candidates timed at its first call (TimePlansAlike): more than the calibration's where
// they fit the budget, since the candidates' times are close by construction; fewer than 2 leave no median worth a
// choice.
constexpr int kTimedMaxRounds = 5, kTimedMinRounds = 2;
constexpr double kMinScale = 0.5, kMaxScale = 8.0;  // the bounds of a measured per-byte scale
// The in-place twoshot's least scale: it ran at 0.55-0.60x the ring's time at 1 MiB on 2 and 4 ranks of the VM.
constexpr double kMinPeerScale = 0.2;
// Its 1 MiB calls are timed up to this many ranks: with 8 ranks on the VM's 2 cores a round of the two would add
// about 15 ms to a calibration of 30-36 ms (the bound is 50 ms). Above it the selector times it at the first calls.
constexpr int kPeerCalibrationMaxRanks = 4;

// The figures every rank measures and the ranks take the median of, in the order they are exchanged; the small
// times of the other algorithms follow them. Those not measured on a shape are 0.
enum Figure : size_t {
  kRingSmall,
  kRingLarge,
  kReduce,
  kCopy,
  kRecursiveLarge,
  kRingMid,
  kRdMid,
  kRdLarge,
  kPeerRing,
  kPeerLarge,
  kFigures
};

double ClampScale(double scale) { return std::min(kMaxScale, std::max(kMinScale, scale)); }

double BestUs(int reps, const std::function<Status()>& once, Status* st) {
  double best = 0;
  for (int i = 0; i < reps && st->ok(); ++i) {
    const uint64_t t0 = NowNs();
    *st = once();
    const double us = static_cast<double>(NowNs() - t0) / 1e3;
    if (i == 0 || us < best) best = us;
  }
  return best;
}

// Collectives' times per call: with `lineUp` one call of each to line the ranks up, then `rounds` rounds in which each
// runs `settle` untimed calls and then `block` calls back to back, timed together, and the median over the rounds of
// each one's time per call. A call timed on its own measures how late this rank came as much as the call (the
// rank that arrives last finds its peers' data waiting); back to back the ranks keep in step, and the median
// drops the rounds in which a rank was descheduled. In rounds, because timed one kind after another the kinds
// measured first took the slow start of a new job (ranks still settling on the cores: 4 ranks on 2 cores ran
// their first few thousand 8 B calls at 30 us, then 12), and the selector preferred whatever was measured last.
// The settling call takes up the skew the previous kind left between the ranks (8 ranks on 2 cores: a small
// ring leaves them hundreds of microseconds apart, and the next kind's first call paid for it: 37 us oneshot
// timed at 80). A block of two, not one timed call: the rank that lags found its peers' data of a lone timed
// call already there and timed it at its own work alone (4 ranks on 2 cores: rd's 12 us calls at 0.5 us).
// Of an even count of rounds the median is the lower middle one: of two rounds, one in which the machine stalled
// does not decide (4 ranks on 2 cores, a timed crossover at 512 KiB of two rounds: ring, oneshot and twoshot came
// out at 1.34-1.47 ms, twoshot at 0.16-0.44 ms in three other jobs' timings of that class; the upper middle, the
// slower round of two, kept the stall).
// Without it the calls start with the first round (the 1 MiB calls on one host, which follow the small ones in step:
// see kLargeCallsBudgetUs). Where `roundsAfterFirst` is given, it is called once the first round is over, with this
// rank's time for it in microseconds, and returns the count of rounds in all (at least 1): it must return the same
// on every rank.
std::vector<double> PerCallUsInterleaved(int rounds, bool lineUp, int settle, int block,
                                         const std::vector<std::function<Status()>>& calls, Status* st,
                                         const std::function<int(double)>& roundsAfterFirst = nullptr) {
  if (lineUp)
    for (const auto& call : calls)
      if (st->ok()) *st = call();
  std::vector<std::vector<double>> us(calls.size());
  for (int i = 0; i < rounds && st->ok(); ++i) {
    const uint64_t roundStart = NowNs();
    for (size_t c = 0; c < calls.size() && st->ok(); ++c) {
      for (int k = 0; k < settle && st->ok(); ++k) *st = calls[c]();
      const uint64_t t0 = NowNs();
      for (int k = 0; k < block && st->ok(); ++k) *st = calls[c]();
      us[c].push_back(static_cast<double>(NowNs() - t0) / 1e3 / block);
    }
    if (i == 0 && roundsAfterFirst && st->ok())
      rounds = std::min(rounds, std::max(1, roundsAfterFirst(static_cast<double>(NowNs() - roundStart) / 1e3)));
  }
  std::vector<double> medians(calls.size(), 0.0);
  for (size_t c = 0; c < calls.size(); ++c) {
    if (us[c].empty()) continue;
    const size_t mid = (us[c].size() - 1) / 2;
    std::nth_element(us[c].begin(), us[c].begin() + mid, us[c].end());
    medians[c] = us[c][mid];
  }
  return medians;
}

// One out-of-place run of `plan` and one in place (`recv` as both buffers), as one call.
std::function<Status()> OutAndInPlace(const PlanRunner& run, const Plan& plan, const void* send, void* recv) {
  return [&run, &plan, send, recv] {
    Status s = run(plan, send, recv);
    return s.ok() ? run(plan, recv, recv) : s;
  };
}

// Every rank's `mine` in, the median over the ranks of each figure out (an allgather): the same on every rank. A
// figure of 0 is one the rank did not measure, and the median is over the ranks that did (0 where none did).
// (The slowest rank's figure was a poor summary: with more ranks than cores one rank or another is descheduled in
// almost every measurement, and the maximum took those.)
Status MedianOverRanks(const PlanGeometry& geo, const PlanRunner& run, const std::vector<double>& mine,
                       std::vector<double>* all) {
  const int p = geo.nranks;
  const size_t nf = mine.size();
  std::vector<double> gathered;
  STRATA_CHECK(GatherOverRanks(geo, run, mine, &gathered));
  all->assign(nf, 0.0);
  for (size_t f = 0; f < nf; ++f) {
    std::vector<double> v;
    for (int r = 0; r < p; ++r)
      if (gathered[r * nf + f] > 0) v.push_back(gathered[r * nf + f]);
    if (v.empty()) continue;
    const size_t mid = (v.size() - 1) / 2;
    std::nth_element(v.begin(), v.begin() + mid, v.end());
    (*all)[f] = v[mid];
  }
  return Status::Ok();
}

}  // namespace

bool MeasuresLocalRates(const PlanGeometry& geo) {
  if (!geo.oversubscribed) return true;
  if (geo.hostOf.size() != static_cast<size_t>(geo.nranks) || geo.rank < 0 || geo.rank >= geo.nranks)
    return geo.rank == 0;
  const int host = geo.hostOf[geo.rank];
  return std::find(geo.hostOf.begin(), geo.hostOf.end(), host) - geo.hostOf.begin() == geo.rank;
}

Status GatherOverRanks(const PlanGeometry& geo, const PlanRunner& run, const std::vector<double>& mine,
                       std::vector<double>* all) {
  all->assign(mine.size() * static_cast<size_t>(geo.nranks), 0.0);
  CollDesc d;
  d.kind = CollKind::AllGather;
  d.count = mine.size();
  d.dtype = strataFloat64;
  return run(BuildPlanWith(AlgoId::Ring, d, geo), mine.data(), all->data());
}

uint64_t SmallCalibrationBytes(int nranks) {
  return std::max<uint64_t>(8, static_cast<uint64_t>(nranks) * sizeof(float));
}

CostInputs CostInputsFromGeometry(const PlanGeometry& geo) {
  CostInputs in;
  in.nranks = geo.nranks;
  std::map<int, int> perHost;
  for (int h : geo.hostOf) ++perHost[h];
  in.nhosts = std::max<int>(1, static_cast<int>(perHost.size()));
  in.ranksPerHost = geo.nranks / in.nhosts;
  for (const auto& h : perHost)
    if (h.second != in.ranksPerHost) in.ranksPerHost = 0;
  if (perHost.empty()) in.ranksPerHost = geo.nranks;
  in.intra = kDefaultShm;
  in.inter = kDefaultNet;
  in.fifoBytes = static_cast<uint64_t>(geo.nslots) * geo.slotBytes;
  in.peerMapped = geo.windowBytes > 0;
  in.windowBytes = geo.windowBytes;
  in.peerAccess = geo.peerAccess;
  in.oversubscribed = geo.oversubscribed;
  in.ranksPerCpu = geo.ranksPerCpu;
  in.pipelineBytes = std::max<uint64_t>(geo.slotBytes, static_cast<uint64_t>(geo.nslots / 2) * geo.slotBytes);
  return in;
}

Status CalibrateCostInputs(const PlanGeometry& geo, const PlanRunner& run, CostInputs* in, CalibrationReport* report,
                           const SlotStoreProbe& stores) {
  const uint64_t start = NowNs();
  const int p = geo.nranks;
  if (p < 2) return Status::Ok();

  // The calls' buffers, which the local rates below use too: a first touch costs the development VM about 0.6 ms a
  // MiB, and 8 ranks' five buffers on its 2 cores held the last rank back from the line-up.
  std::vector<float> send(kLargeBytes / sizeof(float), 1.0f), recv(send.size());
  Status st = Status::Ok();
  // Local rates: one reduction and one copy of 1 MiB, best of three (the first warms the pages). Where some host runs
  // more ranks than cores, only the first rank of each host measures them, best of eight, once the ranks have lined up
  // (below) and the others wait for it; the others send 0 (not measured), which the median over the ranks leaves out.
  // Measured on every rank before the line-up, 8 ranks on 2 cores took each other's cores: their rates and buffers
  // (about 3.3 ms a rank) made most of the wait for the last rank (up to 21 ms). A lone rank measuring before the
  // line-up, while the others touched their buffers, put the reduction at 7.9-14.2 GB/s, where the median of eight had
  // 14.1-17.2; just after it, best of three, 6.9-16.1, and best of eight 12.3-16.6 (docs/PERFORMANCE.md).
  const bool measuresRates = MeasuresLocalRates(geo);
  std::vector<float> out(measuresRates ? send.size() : 0);
  double reduceUs = 0, copyUs = 0;
  const int ratesReps = geo.oversubscribed ? 8 : 3;
  auto measureRates = [&] {
    reduceUs = BestUs(
        ratesReps,
        [&] {
          HostReduce(out.data(), send.data(), recv.data(), send.size(), strataFloat32, strataSum, 1);
          return Status::Ok();
        },
        &st);
    copyUs = BestUs(
        ratesReps,
        [&] {
          HostCopy(out.data(), send.data(), kLargeBytes);
          return Status::Ok();
        },
        &st);
  };
  if (measuresRates && !geo.oversubscribed) measureRates();

  // Ring allreduces: one float per rank for the latency of a step, 1 MiB for the bandwidth of the slowest link.
  // (Fewer elements than ranks leave some of the ring's chunks empty and skip their steps: 8 bytes on 4 ranks
  // took 24 us where 16 took 40, and the ring looked as fast as rd.)
  const uint64_t smallBytes = SmallCalibrationBytes(p);
  auto planOf = [&](AlgoId id, uint64_t bytes) {
    CollDesc d;
    d.kind = CollKind::AllReduce;
    d.count = bytes / sizeof(float);
    d.dtype = strataFloat32;
    d.op = strataSum;
    return BuildPlanWith(id, d, geo);
  };
  auto callOf = [&](const Plan& plan) {
    return [&run, &plan, &send, &recv] { return run(plan, send.data(), recv.data()); };
  };
  // The ring, then every other algorithm that can run a small allreduce here, for what its messages really cost
  // (a plan that names another algorithm is a fallback: this shape does not fit it).
  std::vector<Plan> smallPlans = {planOf(AlgoId::Ring, smallBytes)};
  std::vector<std::string> smallNames;
  for (AlgoId id : kSmallCandidates) {
    Plan plan = planOf(id, smallBytes);
    if (plan.algorithm != GetAlgoInfo(id).name) continue;
    smallNames.push_back(plan.algorithm);
    smallPlans.push_back(std::move(plan));
  }
  // The ranks lined up first: one that arrives early waits here for the last, whose init is still running (8 ranks on
  // 2 cores: up to 23 ms). That wait is the job's start, which the first collective would pay without a calibration.
  const uint64_t waitStart = NowNs();
  STRATA_CHECK(run(smallPlans[0], send.data(), recv.data()));
  const uint64_t ratesStart = NowNs();
  if (measuresRates && geo.oversubscribed) measureRates();
  STRATA_CHECK(st);
  const uint64_t smallStart = NowNs();
  std::vector<std::function<Status()>> smallCalls;
  for (const Plan& plan : smallPlans) smallCalls.push_back(callOf(plan));
  // On one host, the rounds that fit a budget by the first one's time, agreed over the ranks (the median of their
  // times). Across hosts every round runs, and each kind of 1 MiB call is lined up first, as every table over the
  // namespaces was measured (docs/PERFORMANCE.md): the budgets were measured on one host only.
  const bool oneHost = in->nhosts == 1;
  auto roundsWithin = [&](double budgetUs, int minRounds, int maxRounds) -> std::function<int(double)> {
    if (!oneHost) return nullptr;
    return [&geo, &run, &st, budgetUs, minRounds, maxRounds](double firstRoundUs) {
      std::vector<double> agreed;
      st = MedianOverRanks(geo, run, {firstRoundUs}, &agreed);
      if (!st.ok() || !(agreed[0] > 0)) return maxRounds;
      const double fit = std::floor(budgetUs / agreed[0]);
      return static_cast<int>(std::min<double>(maxRounds, std::max<double>(minRounds, fit)));
    };
  };
  const std::vector<double> smallMedians =
      PerCallUsInterleaved(kSmallRounds, true, 1, kSmallBlock, smallCalls, &st,
                           roundsWithin(kSmallCallsBudgetUs, kSmallMinRounds, kSmallRounds));
  const uint64_t largeStart = NowNs();
  // The slot stores first, so that the 1 MiB calls below, and the selector's timings after them, run in the mode the
  // class's calls will settle in: a launch can run the ring about 2x slower with one than with the other from its start
  // (SlotStoreTuner::startIn). Two rounds where the first took under half the 1 MiB calls' budget, else one.
  double slotUs[2] = {0, 0};  // ordinary, streaming
  bool slotStreaming = false;
  if (stores.run && oneHost && p <= kPeerCalibrationMaxRanks) {
    const Plan ring = planOf(AlgoId::Ring, kLargeBytes);
    std::vector<std::function<Status()>> both;
    for (bool streaming : {false, true})
      both.push_back(
          [&stores, &ring, &send, &recv, streaming] { return stores.run(ring, send.data(), recv.data(), streaming); });
    const std::vector<double> us = PerCallUsInterleaved(kSlotStoreRounds, true, 0, kSmallBlock, both, &st,
                                                        roundsWithin(kLargeCallsBudgetUs / 2, 1, kSlotStoreRounds));
    STRATA_CHECK(st);
    slotUs[0] = us[0];
    slotUs[1] = us[1];
    slotStreaming = slotUs[0] > SlotStoreTuner::kMargin * slotUs[1];
    if (stores.startIn) stores.startIn(slotStreaming);
  }
  const double smallUs = smallMedians[0];
  const std::vector<double> smallTimes(smallMedians.begin() + 1, smallMedians.end());
  // The recursive algorithms' per-byte cost against the ring's: from three ranks on with rhd; on two, rhd is the
  // ring's own exchange, and rd (each rank sends its whole buffer and reduces it all) is the one that differs.
  const AlgoId recursive = p >= 3 ? AlgoId::Rhd : AlgoId::Rd;
  const Plan large = planOf(AlgoId::Ring, kLargeBytes), recursivePlan = planOf(recursive, kLargeBytes);
  // From three ranks on one host, rd at 1 MiB as well, for a scale of its own: there its exchanges of the whole
  // vector fared better against rhd's than the model gave them with rhd's scale (4 ranks on 2 cores: rd 1.08-1.13x
  // faster than rhd at 256 KiB in three tables, the model choosing rhd from 256 KiB; 1.3x slower at 1 MiB).
  const bool rdToo = p >= 3 && in->nhosts == 1;
  const Plan rdLarge = rdToo ? planOf(AlgoId::Rd, kLargeBytes) : Plan();
  std::vector<std::function<Status()>> largeCalls = {callOf(large), callOf(recursivePlan)};
  if (rdToo) largeCalls.push_back(callOf(rdLarge));
  std::vector<double> largeMedians = PerCallUsInterleaved(
      kLargeRounds, !oneHost, 0, 1, largeCalls, &st, roundsWithin(kLargeCallsBudgetUs, kLargeMinRounds, kLargeRounds));
  largeMedians.resize(3, 0.0);
  const double largeUs = largeMedians[0], rhdUs = largeMedians[1], rdUs = largeMedians[2];
  // Where the ranks copy in place (cross-memory attach), the allreduce's twoshot at 1 MiB beside the ring, for its
  // per-byte cost against the ring's (CostInputs::peerScale). Lined up and settled: a twoshot call starts with every
  // rank's flag, so a rank that comes early from the call before counts its wait (among the 1 MiB calls above, twoshot
  // timed 300 us where the ring took 175; back to back 77-80 us against 130-147). Up to kPeerCalibrationMaxRanks.
  const bool peerToo = geo.peerAccess && oneHost && p <= kPeerCalibrationMaxRanks;
  std::vector<double> peerMedians(2, 0.0);
  if (peerToo) {
    const Plan peerLarge = planOf(AlgoId::TwoShot, kLargeBytes);
    peerMedians = PerCallUsInterleaved(kLargeRounds, true, 1, kSmallBlock, {callOf(large), callOf(peerLarge)}, &st,
                                       roundsWithin(kLargeCallsBudgetUs, kLargeMinRounds, kLargeRounds));
  }
  // Two ranks on one host only: between hosts the network hides what the caches change, and on more ranks a 128 KiB
  // call is mostly latency (8 ranks on 2 cores: 338 us against the small ring's 240-395), so that a per-byte scale
  // taken from it swung from 0.82 to 2.61 between launches. Timed as the small calls are (settled, in blocks): one
  // at a time, the ring's 128 KiB calls on 2 ranks took 21-59 us from round to round where rd's took 23-29. Each
  // call is one out-of-place and one in-place allreduce, as the perf tools report both: rd gains more in place
  // (128 KiB on 2 ranks: 5.0-5.8 us against 6.6-7.0 out of place, the ring 6.9-7.1 against 7.6-7.7).
  const bool mids = p == 2 && in->nhosts == 1;
  std::vector<double> midMedians(2, 0.0);
  if (mids) {
    const Plan mid = planOf(AlgoId::Ring, kMidBytes), rdMid = planOf(AlgoId::Rd, kMidBytes);
    midMedians = PerCallUsInterleaved(
        kLargeRounds, true, 1, kSmallBlock,
        {OutAndInPlace(run, mid, send.data(), recv.data()), OutAndInPlace(run, rdMid, send.data(), recv.data())}, &st);
    for (double& us : midMedians) us /= 2;  // per allreduce
  }
  STRATA_CHECK(st);
  const uint64_t largeEnd = NowNs();

  // Every rank takes the median over the ranks of each figure: the same inputs everywhere, the same choices.
  std::vector<double> mine(kFigures);
  mine[kRingSmall] = smallUs;
  mine[kRingLarge] = largeUs;
  mine[kReduce] = reduceUs;
  mine[kCopy] = copyUs;
  mine[kRecursiveLarge] = rhdUs;
  mine[kRingMid] = midMedians[0];
  mine[kRdMid] = midMedians[1];
  mine[kRdLarge] = rdUs;
  mine[kPeerRing] = peerMedians[0];
  mine[kPeerLarge] = peerMedians[1];
  mine.insert(mine.end(), smallTimes.begin(), smallTimes.end());
  std::vector<double> all;
  STRATA_CHECK(MedianOverRanks(geo, run, mine, &all));

  const double n = static_cast<double>(kLargeBytes);
  in->reduceGBs = n / std::max(all[kReduce], 1e-3) / 1e3;
  in->copyGBs = n / std::max(all[kCopy], 1e-3) / 1e3;
  const int hops = 2 * (p - 1);
  LinkCost measured;
  measured.latencyUs = std::max(0.1, all[kRingSmall] / hops);
  // What the large ring spends on its links: total minus latency minus its reductions.
  const double reduceShare = (p - 1.0) / p * n / (in->reduceGBs * 1e3);
  const double wireUs = std::max(all[kRingLarge] - all[kRingSmall] - reduceShare, 0.1 * all[kRingLarge]);
  measured.bandwidthGBs = hops / static_cast<double>(p) * n / wireUs / 1e3;
  if (in->nhosts > 1) {
    // A small ring waits on one hop after another around the ring, and h of every p hops cross hosts:
    // the network's latency is what remains of the ring's once the hops within hosts are taken out.
    const double intraLat = std::min(measured.latencyUs, kDefaultShm.latencyUs);
    const double share = static_cast<double>(in->nhosts) / p;
    in->inter = measured;
    in->inter.latencyUs =
        std::max(measured.latencyUs, (all[kRingSmall] - hops * (1 - share) * intraLat) / (hops * share));
    in->intra = LinkCost{intraLat, in->copyGBs / 2};
    in->interLinkBound = all[kRingLarge] >= kLongCallUs;
  } else {
    in->intra = measured;
    in->interLinkBound = false;
  }
  in->smallUs.clear();
  in->smallUs["ring"] = all[kRingSmall];
  for (size_t i = 0; i < smallNames.size(); ++i) in->smallUs[smallNames[i]] = all[kFigures + i];
  // rhd (rd) against the model fitted on the ring: the ratio of measured to modelled per-byte time.
  in->recursiveScale = 1.0;
  in->recursiveScaleBytes = 0;
  in->recursiveScaleSmallBytes = 0;
  const char* name = GetAlgoInfo(recursive).name;
  const double latency = EstimateUs(name, CollKind::AllReduce, 0, *in);
  auto scaleFor = [&](double measuredUs, double modelledUs) {
    return ClampScale((measuredUs - latency) / (modelledUs - latency));
  };
  const double modelled = EstimateUs(name, CollKind::AllReduce, kLargeBytes, *in);
  const double modelledMid = EstimateUs(name, CollKind::AllReduce, kMidBytes, *in);
  // In cache: the scale that gives the model's rd the ratio to the ring's that was measured at that size (the ring's
  // link bandwidth is fitted at 1 MiB, so the two are compared, not the rd time against the model's alone).
  const double ringModelledMid = EstimateUs("ring", CollKind::AllReduce, kMidBytes, *in);
  if (mids && all[kRingMid] > 0 && all[kRdMid] > 0 && modelledMid > latency) {
    in->recursiveScaleSmall = scaleFor(all[kRdMid] / all[kRingMid] * ringModelledMid, modelledMid);
    in->recursiveScaleSmallBytes = kMidBytes;
  }
  if (all[kRecursiveLarge] > 0 && modelled > latency) in->recursiveScale = scaleFor(all[kRecursiveLarge], modelled);
  // Between hosts, where the 1 MiB ring is a long call (kLongCallUs), the scale is at least kLinkBoundRecursiveScale
  // (at 1 MiB and below, and so at every size): the ring has the ties. There the two send the same bytes and the call
  // is those bytes on the link, so the ring gives up at most what rhd saves in latency, a few percent of the call. Lone
  // calls time rhd's exchanges of half the vector at once level with the ring's steady pipeline, but back to back rhd
  // runs slower: 4 hosts at 1 Gbit/s, its scale came out at 0.99-1.06 in nine launches, the model chose it in five of
  // them, and it took 1.03-1.22x the ring's time at 1 MiB in ten tables of ten (a floor of kInterHostRecursiveScale did
  // not cover the ring's longer latency: rhd still in two launches of six).
  if (in->interLinkBound) in->recursiveScale = std::max(in->recursiveScale, kLinkBoundRecursiveScale);
  // rd's own 1 MiB scale, as a factor over rhd's (clamped as the scales are).
  in->rdScaleFactor = 1.0;
  if (rdToo && all[kRdLarge] > 0) {
    const double rdLatency = EstimateUs("rd", CollKind::AllReduce, 0, *in);
    const double rdModelled = EstimateUs("rd", CollKind::AllReduce, kLargeBytes, *in);  // with rhd's scale
    if (rdModelled > rdLatency) {
      const double rdScale = in->recursiveScale * (all[kRdLarge] - rdLatency) / (rdModelled - rdLatency);
      in->rdScaleFactor = ClampScale(rdScale) / in->recursiveScale;
    }
  }
  // The in-place twoshot's time beside the ring's, as a scale of the ring's per-byte cost: what remains of its time
  // once its flags and system calls are taken out, over what remains of the ring's once its latency is.
  in->peerScale = 0;
  in->peerScaleBytes = 0;
  if (peerToo && all[kPeerLarge] > 0 && all[kPeerRing] > all[kRingSmall]) {
    CostInputs fixedOnly = *in;  // the estimate's fixed part: any measured scale, then its bytes taken out
    fixedOnly.peerScale = kMinPeerScale;
    fixedOnly.peerScaleBytes = kLargeBytes;
    const double ringBytesUs =
        EstimateUs("ring", CollKind::AllReduce, kLargeBytes, *in) - EstimateUs("ring", CollKind::AllReduce, 0, *in);
    const double fixedUs =
        EstimateUs("twoshot", CollKind::AllReduce, kLargeBytes, fixedOnly) - kMinPeerScale * ringBytesUs;
    const double ratio = (all[kPeerLarge] - fixedUs) / (all[kPeerRing] - all[kRingSmall]);
    in->peerScale = std::min(kMaxScale, std::max(kMinPeerScale, ratio));
    in->peerScaleBytes = kLargeBytes;
  }
  // Between hosts of one rank each where the 1 MiB ring is not link-bound (the same verdict on every rank: it comes
  // from the medians), rhd and the ring at kInterHostScaleBytes as well, for the large scale (below).
  double ringWideUs = 0, recursiveWideUs = 0;
  const uint64_t wideStart = NowNs();
  if (!oneHost && !in->interLinkBound && in->ranksPerHost == 1) {
    std::vector<float> wideSend(kInterHostScaleBytes / sizeof(float), 1.0f), wideRecv(wideSend.size());
    const Plan ringWide = planOf(AlgoId::Ring, kInterHostScaleBytes);
    const Plan recursiveWide = planOf(recursive, kInterHostScaleBytes);
    auto wideCall = [&run, &wideSend, &wideRecv](const Plan& plan) {
      return [&run, &plan, &wideSend, &wideRecv] { return run(plan, wideSend.data(), wideRecv.data()); };
    };
    const std::vector<double> wide =
        PerCallUsInterleaved(kInterHostScaleRounds, false, 0, 1, {wideCall(ringWide), wideCall(recursiveWide)}, &st);
    STRATA_CHECK(st);
    std::vector<double> agreed;
    STRATA_CHECK(MedianOverRanks(geo, run, wide, &agreed));
    ringWideUs = agreed[0];
    recursiveWideUs = agreed[1];
  }
  const uint64_t wideEnd = NowNs();
  // The 1 MiB scale holds at 1 MiB only; from 8x that size on one host, between hosts from the size measured next or
  // 2x (moving with log2 of the size in between):
  // - On one host it is measured in cache. Memory is the link, and out of cache an exchange's copy pass and reduce
  //   pass (1 read + 1 write, then 2 reads + 1 write) move 5/3 of the ring's fused pass (2 reads + 1 write).
  // - Between hosts both send the same bytes over the same links, but not with the same work: rhd copies each piece
  //   it sends into a FIFO slot and each piece it receives out of one in passes of their own, where the ring reduces
  //   into the slot it sends from. Where the link is not the bottleneck the host's CPU is, and those passes show:
  //   forced back to back over 4 hosts at 10 Gbit/s, rhd took 1.21-1.44x the ring's time at every size from 2 to
  //   64 MiB, and 1.32-1.47x over 2 hosts x 2 ranks (8 MiB over 4 hosts: 1.33x the ring's CPU seconds, its own
  //   copies 1.39x the ring's; docs/PERFORMANCE.md, "Seventeenth session"). The 1 MiB time does not show it: there
  //   rhd's scale came out at 0.73-0.94 and rhd ran 1.6x faster than the ring (whose 1 MiB call took 0.8x its 2 MiB
  //   call's time). So the large scale holds from 2 MiB (kInterHostLargeBytes), not 8, and is no longer 1.02: with
  //   1.02 from 8 MiB the model ran rhd at 2 and 4 MiB, and with 1.02 from 2 MiB still at 2 MiB in five launches of
  //   eight. (Over a link-bound network the scale is at least 1.10 at every size.)
  // - How much those passes cost depends on the host and on the code, not on anything the 1 MiB call shows: on the
  //   same kind of VM sixteen sessions later, rhd ran 0.64-0.93x the ring's time at every size from 2 to 64 MiB
  //   over 4 hosts at 10 Gbit/s, and the floor of 1.20 kept the ring, 1.10-1.18x slower, from 16 MiB
  //   (docs/PERFORMANCE.md, "Thirty-third session"). So over hosts of one rank each, where the network is not
  //   link-bound, the two are timed at kInterHostScaleBytes too, and the scale that gives the model's rhd the ratio
  //   to the model's ring measured there holds from that size on. Over a link-bound network the floor stays: there
  //   both calls are their bytes on the link. So it does with several ranks a host, where `hier` runs the large sizes
  //   and the timing is not worth its cost: 2 hosts x 2 ranks at 10 Gbit/s, ranks sharing the VM's cores, timed the
  //   4 MiB ring at 6.9-10.2 ms and rhd at 5.8-8.3 ms from launch to launch, and a launch whose scale came out at 0.50
  //   ran rhd, 1.4-1.8x slower than `hier`, from 4 MiB.
  in->recursiveScaleBytes = kLargeBytes;
  in->recursiveScaleLarge =
      std::max(in->recursiveScale, in->nhosts == 1 ? kOutOfCacheRecursiveScale : kInterHostRecursiveScale);
  in->recursiveScaleLargeBytes = in->nhosts == 1 ? 0 : kInterHostLargeBytes;
  if (ringWideUs > 0 && recursiveWideUs > 0) {
    CostInputs unscaled = *in;  // the model before any measured scale, as `scaleFor` compares with
    unscaled.recursiveScale = unscaled.recursiveScaleLarge = unscaled.rdScaleFactor = 1.0;
    const double ringModelled = EstimateUs("ring", CollKind::AllReduce, kInterHostScaleBytes, unscaled);
    const double wideModelled = EstimateUs(name, CollKind::AllReduce, kInterHostScaleBytes, unscaled);
    const double wideLatency = EstimateUs(name, CollKind::AllReduce, 0, unscaled);
    if (wideModelled > wideLatency) {
      in->recursiveScaleLarge =
          ClampScale((recursiveWideUs / ringWideUs * ringModelled - wideLatency) / (wideModelled - wideLatency));
      in->recursiveScaleLargeBytes = kInterHostScaleBytes;
    }
  }
  if (report) {
    report->ringSmallUs = all[kRingSmall];
    report->smallBytes = smallBytes;
    report->ringLargeUs = all[kRingLarge];
    report->rhdLargeUs = all[kRecursiveLarge];
    report->rdLargeUs = all[kRdLarge];
    report->ringWideUs = ringWideUs;
    report->recursiveWideUs = recursiveWideUs;
    report->wideBytes = ringWideUs > 0 ? kInterHostScaleBytes : 0;
    report->peerLargeUs = all[kPeerLarge];
    report->peerRingUs = all[kPeerRing];
    report->largeBytes = kLargeBytes;
    report->ringMidUs = all[kRingMid];
    report->rdMidUs = all[kRdMid];
    report->midBytes = mids ? kMidBytes : 0;
    report->slotCachedUs = slotUs[0];
    report->slotStreamingUs = slotUs[1];
    report->slotStreaming = slotStreaming;
    report->elapsedMs = static_cast<double>(NowNs() - start) / 1e6;
    report->localMs = static_cast<double>(waitStart - start + smallStart - ratesStart) / 1e6;
    report->waitMs = static_cast<double>(ratesStart - waitStart) / 1e6;
    report->smallMs = static_cast<double>(largeStart - smallStart) / 1e6;
    report->largeMs = static_cast<double>(largeEnd - largeStart) / 1e6;
    report->wideMs = static_cast<double>(wideEnd - wideStart) / 1e6;
  }
  return Status::Ok();
}

namespace {
// Rounds of `callsPerRound` calls of every plan (after one call each to line up) that fit `budgetUs`, a call being
// `runsPerCall` runs: at most kTimedMaxRounds, and 0 when fewer than kTimedMinRounds fit.
int RoundsWithin(double budgetUs, double usPerRunOfAll, int runsPerCall, int callsPerRound) {
  const double callUs = usPerRunOfAll * runsPerCall;
  if (!(callUs > 0)) return kTimedMaxRounds;
  const double rounds = std::floor((budgetUs / callUs - 1) / callsPerRound);
  if (rounds < kTimedMinRounds) return 0;
  return rounds > kTimedMaxRounds ? kTimedMaxRounds : static_cast<int>(rounds);
}

// TimedPlansWithin for any pattern of calls.
int KeepWithin(double budgetUs, const std::vector<double>& usPerRun, const std::vector<bool>& droppable,
               int runsPerCall, int callsPerRound, std::vector<size_t>* keep) {
  keep->clear();
  double usOfAll = 0;
  for (size_t i = 0; i < usPerRun.size(); ++i) {
    keep->push_back(i);
    usOfAll += usPerRun[i];
  }
  for (;;) {
    if (keep->size() < 2) break;
    const int rounds = RoundsWithin(budgetUs, usOfAll, runsPerCall, callsPerRound);
    if (rounds > 0) return rounds;
    auto last = std::find_if(keep->rbegin(), keep->rend(), [&droppable](size_t i) { return droppable[i]; });
    if (last == keep->rend()) break;
    usOfAll -= usPerRun[*last];
    keep->erase(std::next(last).base());
  }
  keep->clear();
  return 0;
}
}  // namespace

int TimedRoundsWithin(double budgetUs, double usPerRunOfAll, bool inPlaceToo) {
  // Every plan: one call to line up, then per round a settling call and a block; a call is two runs in place too.
  return RoundsWithin(budgetUs, usPerRunOfAll, inPlaceToo ? 2 : 1, 1 + kSmallBlock);
}

int TimedPlansWithin(double budgetUs, const std::vector<double>& usPerRun, const std::vector<bool>& droppable,
                     bool inPlaceToo, std::vector<size_t>* keep) {
  return KeepWithin(budgetUs, usPerRun, droppable, inPlaceToo ? 2 : 1, 1 + kSmallBlock, keep);
}

TimingPattern TimingWithin(double budgetUs, const std::vector<double>& usPerRun, const std::vector<bool>& droppable,
                           bool inPlaceToo, double lightBudgetUs, std::vector<size_t>* keep) {
  TimingPattern full;
  full.block = kSmallBlock;
  full.inPlaceToo = inPlaceToo;
  full.rounds = TimedPlansWithin(budgetUs, usPerRun, droppable, inPlaceToo, keep);
  if (full.rounds > 0 || lightBudgetUs <= 0) return full;
  TimingPattern light;
  light.settle = false;
  light.block = kSmallBlock;
  light.inPlaceToo = false;
  light.rounds = KeepWithin(budgetUs, usPerRun, droppable, 1, light.block, keep);
  if (light.rounds > 0 || lightBudgetUs <= budgetUs) return light;
  // The light budget serves the plans that must be timed (those not droppable) alone, not the model's alternatives.
  std::vector<double> mustUs;
  std::vector<size_t> must;
  for (size_t i = 0; i < usPerRun.size(); ++i)
    if (!droppable[i]) {
      must.push_back(i);
      mustUs.push_back(usPerRun[i]);
    }
  light.rounds = KeepWithin(lightBudgetUs, mustUs, std::vector<bool>(must.size(), false), 1, light.block, keep);
  for (size_t& k : *keep) k = must[k];
  return light;
}

Status TimePlansAlike(const PlanGeometry& geo, const PlanRunner& run, const std::vector<Plan>& plans, const void* send,
                      void* recv, const TimingPattern& how, std::vector<double>* us) {
  const bool inPlaceToo = how.inPlaceToo;
  std::vector<std::function<Status()>> calls;
  for (const Plan& plan : plans)
    calls.push_back(inPlaceToo ? OutAndInPlace(run, plan, send, recv)
                               : std::function<Status()>([&run, &plan, send, recv] { return run(plan, send, recv); }));
  Status st = Status::Ok();
  std::vector<double> mine = PerCallUsInterleaved(how.rounds, true, how.settle ? 1 : 0, how.block, calls, &st);
  STRATA_CHECK(st);
  if (inPlaceToo)
    for (double& t : mine) t /= 2;
  return MedianOverRanks(geo, run, mine, us);
}

Status LookAgainAtCloseCall(const PlanGeometry& geo, const PlanRunner& run, const std::vector<Plan>& plans,
                            const void* send, void* recv, double budgetUs, bool inPlaceToo, double lightBudgetUs,
                            double closeRatio, std::vector<double>* us, std::vector<size_t>* again) {
  again->clear();
  std::vector<size_t> order;
  for (size_t i = 0; i < us->size() && i < plans.size(); ++i)
    if ((*us)[i] > 0) order.push_back(i);
  if (order.size() < 2) return Status::Ok();
  std::partial_sort(order.begin(), order.begin() + 2, order.end(),
                    [us](size_t a, size_t b) { return (*us)[a] < (*us)[b]; });
  const size_t first = order[0], second = order[1];
  if ((*us)[second] > (*us)[first] * closeRatio) return Status::Ok();
  std::vector<size_t> keep;
  const TimingPattern how =
      TimingWithin(budgetUs, {(*us)[first], (*us)[second]}, {false, false}, inPlaceToo, lightBudgetUs, &keep);
  if (how.rounds == 0) return Status::Ok();
  std::vector<double> twice;
  STRATA_CHECK(TimePlansAlike(geo, run, {plans[first], plans[second]}, send, recv, how, &twice));
  const double before = (*us)[first] + (*us)[second];
  (*us)[first] = ((*us)[first] + twice[0]) / 2;
  (*us)[second] = ((*us)[second] + twice[1]) / 2;
  // The others were not timed again: they move as the pair's sum did, so that a pace the machine changed between the
  // two timings does not put one of them ahead of the pair it trailed.
  const double factor = ((*us)[first] + (*us)[second]) / before;
  for (size_t i = 0; i < us->size(); ++i)
    if (i != first && i != second && (*us)[i] > 0) (*us)[i] *= factor;
  *again = {first, second};
  return Status::Ok();
}

}  // namespace strata
