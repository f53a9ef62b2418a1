// The selector: for a collective and a size, the cheapest implemented algorithm of the table under
// the cost model, cached per (collective, size class). Every rank builds it from the same inputs, so
// every rank picks the same algorithm. Where the model's leading algorithms are too close to call, the
// communicator may time them at the first call of the size class and record the fastest (`candidates`,
// `settle`): the model's estimates are straight lines where the measured times are not.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "algorithms/cost_model.h"

namespace strata {

// Size classes are centred on powers of two: class k holds sizes within a factor sqrt(2) of 2^k
// (k = log2 rounded to the nearest integer); the empty buffer is class -1.
int SizeClass(uint64_t bytes);
// The power of two the size class of `bytes` is decided at; 0 for the empty buffer.
uint64_t ClassBytes(uint64_t bytes);

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

  // The choice already made for the size class of `bytes`, if any, and (`measured`, optional) whether settle made it.
  bool known(CollKind kind, uint64_t bytes, AlgoId* out, bool* measured = nullptr);
  // The algorithms worth timing for the size class of `bytes`: the model's choice first, then every other
  // implemented algorithm whose estimate at the class's power of two is within kMeasureMargin of it (and may be timed
  // as a rival, timedAsRival), cheapest first, at most kMeasureMaxCandidates in all, and above
  // kWindowAlgoSelectMaxBytes oneshot and twoshot where they fit up to the largest class the allreduce's twoshot fits
  // (the model cannot rank them there; never otherwise; an allgather's and a reduce-scatter's oneshot alone, wherever
  // it fits), and across hosts hier_leader (timedWherever). Beside a window choice above kWindowAlgoSelectMaxBytes with
  // no FIFO algorithm within the margin, the FIFO algorithm of least estimate, first of the rivals. Only
  // the model's choice below measureMinBytes(), for the empty buffer (nothing moves), for broadcast and reduce, and
  // where corePerRankWindowKeeps; but
  // a small class across hosts whose model's choice is not rd, and one that oneshot keeps outright on one host of 2
  // ranks, has rd beside it (smallOverridesRd; there an allgather and a reduce-scatter also the ring). (Whether the
  // candidates' timing fits kMeasureBudgetUs is the caller's to decide.)
  std::vector<AlgoId> candidates(CollKind kind, uint64_t bytes) const;
  // Whether a class of `bytes` at or below kSmallAllReduceBytes whose model's choice `pick` is not rd is timed against
  // rd (allreduce, allgather, reduce-scatter): across hosts, where the model's choice overrode rd by its estimates of
  // the bytes that cross hosts, or (allgather, reduce-scatter) by hop latencies that no small call measured; and on one
  // host of 2 ranks where `pick` is oneshot kept outright (smallSizeAlgo), whose lead over rd there is the machine's.
  bool smallOverridesRd(CollKind kind, uint64_t bytes, AlgoId pick) const;
  // Whether `id` is timed for `kind` in the size class of `bytes` whatever the model estimates (where it fits, and the
  // class is timed at all): the window algorithms above kWindowAlgoSelectMaxBytes up to the largest class the
  // allreduce's twoshot fits (allgather and reduce-scatter run twoshot as oneshot: oneshot alone for them, wherever it
  // fits), hier_leader across hosts.
  // The caller keeps them when the budget drops the model's other alternatives.
  bool timedWherever(AlgoId id, CollKind kind, uint64_t bytes) const;
  // Whether a small call of `kind` (up to kSmallAllReduceBytes) has an algorithm that keeps it, which (`keep`), and
  // whether it keeps it whatever the estimates (`outright`) or unless another's estimate beats its own by
  // kSmallAllReduceMargin. An allreduce: oneshot outright on one host of 2 ranks where it fits, up to
  // kTwoRankOneshotAllReduceBytes; oneshot or twoshot outright where corePerRankWindowKeeps; oneshot by the margin
  // on one host of three ranks or more where it fits; else rd by the margin. A reduce-scatter (an allgather: up to
  // kSmallAllGatherBytes): oneshot outright on one host where it fits, none elsewhere. None for the other collectives.
  bool smallSizeAlgo(CollKind kind, uint64_t bytes, AlgoId* keep, bool* outright) const;
  // Whether a small allreduce (up to kSmallAllReduceBytes) runs a window algorithm outright and untimed: on one host
  // of 3 to kCorePerRankWindowMaxRanks ranks with a core each (not CostInputs::oversubscribed), where oneshot fits.
  // oneshot up to kCorePerRankOneshotAllReduceBytes, twoshot above (oneshot where twoshot does not fit).
  bool corePerRankWindowKeeps(CollKind kind, uint64_t bytes) const;
  // The least size class whose candidates are timed: kOneHostMeasureMinBytes on one host of three ranks or more,
  // kNetworkMeasureMinBytes across hosts whose network is not link-bound (CostInputs::interLinkBound), else
  // kMeasureMinBytes.
  uint64_t measureMinBytes() const;
  // The least time settle counts for `id`'s timing in the class of `bytes` (0: none): for rd's allreduce across hosts
  // where a host has several ranks, its bytes across a host's link (ranks of a host times the vector) at the
  // calibrated link rate, which a short timing can undercount; over a link-bound network (CostInputs::interLinkBound)
  // with one rank per host too, and counting each of rd's exchanges between hosts (log2 of the hosts).
  double timedFloorUs(AlgoId id, CollKind kind, uint64_t bytes) const;
  // The factor settle counts the timing of `id`, one of `candidates` timed as `us` (`us[i]` for `candidates[i]`, <= 0
  // for one not timed) for the class of `bytes`, by: kWarmTimingScale for an algorithm other than oneshot and twoshot
  // on one host of three ranks or more where one of those two was timed beside it (the timing reuses one warm pair of
  // buffers, on which the algorithms that pass every call through the FIFO slots keep up with those that read their
  // peers' windows; calls whose buffers move fall behind them there): for an allgather or reduce-scatter where a host
  // runs more ranks than cores (CostInputs::oversubscribed), and for an allreduce where twoshot goes through the window
  // (not CopiesInPlace), with a core per rank or not; kInPlaceWarmTimingScale for the plan that goes in place
  // on 2 ranks, up to InPlaceWarmTimingMaxBytes; kHierBesideLeaderScale for hier's allreduce across hosts of two ranks
  // each where hier_leader was timed beside it; kSmallAllReduceMargin for rd and the ring beside the oneshot that keeps
  // a small class on one host of 2 ranks (smallOverridesRd); kRdBesideRhdScale for rd's allreduce beside rhd's from
  // kRdBesideRhdMinBytes on one host of three ranks or more, more than it has cores; else 1. `why` (optional) says
  // which.
  enum class ScaleWhy { kNone, kBesideWindows, kInPlace, kBesideLeader, kBesideSmallOneshot, kRdBesideRhd };
  double timedScale(AlgoId id, CollKind kind, uint64_t bytes, const std::vector<AlgoId>& candidates,
                    const std::vector<double>& us, ScaleWhy* why = nullptr) const;
  // Whether `id` may be timed as a close rival of the model's choice, estimated at `pickUs` for the class of `bytes`:
  // not where its timedFloorUs is above `pickUs`.
  bool timedAsRival(AlgoId id, CollKind kind, uint64_t bytes, double pickUs) const;
  // Records the fastest of `candidates` by the times measured for them (`us[i]` for `candidates[i]`, the same on
  // every rank, each counted at least at its timedFloorUs, then times its timedScale) as the choice of the size
  // class, and returns it. The model's choice (the first) stays unless another is faster by more than kMeasureTie; a
  // candidate with no time (<= 0) is passed over.
  AlgoId settle(CollKind kind, uint64_t bytes, const std::vector<AlgoId>& candidates, const std::vector<double>& us);
  // Records `id` as the choice of the size class of `bytes`, made by a timing on the calls (counted as measured).
  void record(CollKind kind, uint64_t bytes, AlgoId id);
  // Whether the size class's choice was made by settle or record.
  bool measured(CollKind kind, uint64_t bytes);

 private:
  AlgoId evaluate(CollKind kind, uint64_t bytes) const;
  // One host of three ranks or more: where the window algorithms meet the FIFO ones on more than one exchange
  // (timedScale, smallSizeAlgo, measureMinBytes).
  bool oneHostOfThreeOrMore() const { return in_.nhosts == 1 && in_.nranks >= 3; }
  static std::pair<int, int> key(CollKind kind, uint64_t bytes);

  CostInputs in_;
  std::mutex mu_;
  struct Choice {
    AlgoId id;
    bool measured;  // written by settle
  };
  std::map<std::pair<int, int>, Choice> cache_;
};

// The bytes the cost model counts for a call (see EstimateUs): the whole vector, so that allgather's
// and reduce-scatter's per-rank counts and alltoall's per-peer count are multiplied by the ranks.
// The selector offers oneshot and twoshot only up to this size (they can still be forced up to the window).
constexpr uint64_t kWindowAlgoSelectMaxBytes = 8 << 10;

uint64_t SelectorBytes(const CollDesc& desc, int nranks);

// Measured crossovers: size classes from kMeasureMinBytes time the algorithms estimated within kMeasureMargin of the
// model's choice at their first call (at most kMeasureMaxCandidates, and those timedWherever), in as many rounds as
// fit kMeasureBudgetUs by the model's estimates (none when two do not fit; across hosts, the light pattern within
// kLightMeasureBudgetUs). Below, the calibration's small-call times decide, but for the small classes across hosts
// where the model's choice overrides rd, and on one host of 2 ranks those oneshot keeps outright
// (AlgoSelector::smallOverridesRd): those are timed against rd. Across hosts the
// classes too long to time are bandwidth-bound, where the model was within 10% of the best forced algorithm on every
// shape measured (docs/PERFORMANCE.md); on one host their candidates take turns on the class's own calls instead
// (Communicator::ClassTrial). (Timing every class from 4 KiB across hosts was tried: over 2 hosts x 2
// ranks at 1 Gbit/s it mended the model's 4 KiB and ran rd at 8 KiB, 1.28-1.53x slower than hier_leader, in three
// jobs of six; a shaped link's burst lets a short timing's bytes through that a sustained run pays for. At 4 KiB rd
// sends about what the bucket refills in a call, so a short timing and a sustained run agree there.)
constexpr uint64_t kMeasureMinBytes = 16 << 10;
// On one host of three ranks or more the timed classes start here instead: there the model prices oneshot's and
// twoshot's reads of their peers' windows at the rate the calibration's ring reached, which on 8 ranks of the 2-core
// development VM was 1.16 GB/s, and it gave 4 KiB and 8 KiB to rd, which ran 1.61x and 1.69x the forced oneshot's time
// (101.4 against 63.1 us, 113.1 against 66.8; docs/PERFORMANCE.md, "Fourteenth session"). One host has no shaped link
// whose burst a short timing could meet. Two ranks keep kMeasureMinBytes: the model's rd was the best forced
// algorithm or within 1.04x of it at 4 KiB and 8 KiB there, on the VM and on a machine with a core per rank.
constexpr uint64_t kOneHostMeasureMinBytes = 4 << 10;
// Across hosts whose network is not link-bound the 8 KiB class is timed too. It is neither a small allreduce (the
// calibration's small-call times and smallOverridesRd) nor, before, timed: the model alone gave it to hier_leader
// over 2 hosts x 2 ranks at 10 Gbit/s, where rd ran 1.26-1.30x faster (two jobs of eight; rd in every other;
// docs/PERFORMANCE.md, "Sixteenth session"). There a call's bytes are a small part of its time, so the link's burst
// allowance does not flatter a short timing; over a link-bound network it does (the note above), and the model, which
// prices its steps as link-bound, decides.
constexpr uint64_t kNetworkMeasureMinBytes = 8 << 10;
constexpr double kMeasureBudgetUs = 20000;
// The light pattern's budget (across hosts, TimingWithin): over 2 hosts x 2 ranks at 10 Gbit/s the 1 MiB class of
// hier and hier_leader went untimed in launches whose calibration measured the link at 0.52 GB/s (the two estimated
// at 2.2 ms a call, 22 ms for two light rounds), and kept hier, which ran 1.41x and 1.47x slower than the forced
// hier_leader in two jobs of three (docs/PERFORMANCE.md, "Tenth session").
constexpr double kLightMeasureBudgetUs = 30000;
constexpr double kMeasureMargin = 1.6;
constexpr size_t kMeasureMaxCandidates = 3;
constexpr double kMeasureTie = 1.02;
// What an allreduce's timing on one host of three ranks or more counts the other candidates by, beside oneshot or
// twoshot (AlgoSelector::timedScale). On 4 ranks of the development VM at 128 KiB, rd's or rhd's time over twoshot's,
// the better of the two in each selector_perf job, was 0.87-1.38 (four jobs of six under 1) with calls moving through
// 256 KiB, 1.00-1.29 through 512 KiB and 1.22-1.32 through 32 MiB, as the perf tools' calls do; the timing had put rd
// or rhd first in jobs whose tables ran a window algorithm 1.1-1.4x faster. With this factor, the choices over 1.10x
// the job's best forced time from 32 KiB to 256 KiB fell from 23 to 7 in 36 jobs (docs/PERFORMANCE.md, "Thirteenth
// session"). Where the warm timing is right, a window algorithm chosen by it runs at most 1.2x the time of the other.
// Where a host runs more ranks than cores (CostInputs::oversubscribed), as those 4 ranks on 2 cores did. With a core
// per rank (16 vCPUs) it had twoshot chosen at 32-128 KiB: there one launch's timing had the ring first at 64 KiB (19.8
// us against twoshot's 22.9), and rd, rhd or the ring ran 1.11-1.47x faster in selector_perf, where twoshot went in
// place from 128 KiB (docs/PERFORMANCE.md, "Twenty-third session"). Once the windows were read in pieces, with the
// scale up to the size from which twoshot goes in place, the 4-rank allreduce's 32 KiB class went to rd or rhd at
// 1.12-1.27x the best forced algorithm in 2 selector_perf jobs of 9 in the trial (2 of 5 on the build kept, 1.14x and
// 1.24x), against 6 of 7 without it; with twoshot in place from 256 KiB on 4 ranks and 512 KiB on 8 as well, the
// choices over 1.10x (16 KiB - 1 MiB) per job were 1, 0, 0 on 4 ranks and 0, 0, 0 on 8, against 0, 2, 2 and 2, 2, 1
// with neither (docs/PERFORMANCE.md, "Twenty-sixth session"). Only the allreduce was measured with a core per rank.
constexpr double kWarmTimingScale = 1.20;
// Below this size the allreduce's timing counts kWarmTimingScale only where a host runs more than
// kWarmTimingSmallMaxRanksPerCpu ranks per CPU (CostInputs::ranksPerCpu), or a core per rank. With two ranks a CPU (4
// ranks on the 2-core VM) rd was the best forced algorithm at 4-16 KiB in all 36 rows of 12 selector_perf launches
// (oneshot 1.00-1.17x its time at 4 KiB), and the scale gave 4 KiB to oneshot in 4 launches of 6; on 3 ranks direct
// was the best and the scale gave oneshot 4-16 KiB rows at up to 1.18x it. With four a CPU (8 ranks on 2 cores, or 4
// on one) oneshot ran 1.04-1.56x faster than rd at 4-16 KiB, and on 8 ranks the timing put rd level with oneshot at 8
// KiB where forced rd ran 1.43x slower (docs/PERFORMANCE.md, "Thirty-eighth session").
constexpr uint64_t kWarmTimingSmallBelowBytes = 32 << 10;
constexpr int kWarmTimingSmallMaxRanksPerCpu = 2;
// What an allreduce's timing counts rd's figure by beside rhd's, from kRdBesideRhdMinBytes on one host of three ranks
// or more where ranks share cores (AlgoSelector::timedScale), where the window algorithms' scale does not apply. rd
// moves and reduces the whole vector at each of its log2(p) steps, rhd half of it at the first and less after: on 4
// ranks 2 vectors a rank against 1.5, on 8 ranks 3 against 1.75. On the one warm pair of buffers the timing reuses,
// those bytes stay in cache, and the two timed within a few percent of each other at 256 KiB on 4 ranks of the 2-core
// VM (rd first in two TUNING launches of four); through selector_perf's rotation rd took 0.96-1.29x rhd's time at 256
// KiB and 0.96-1.30x at 512 KiB in 32 jobs (medians 1.08 and 1.14; 1.00-1.51x at 1 MiB, median 1.27), and on 8
// ranks 1.15-1.25x at 256 KiB in 11 (docs/PERFORMANCE.md, "Thirty-first session"). On 2 ranks the two move the same
// bytes (rd/rhd 0.92-1.23x at 512 KiB in 20 jobs of the twenty-ninth session): not there.
constexpr double kRdBesideRhdScale = 1.10;
constexpr uint64_t kRdBesideRhdMinBytes = 256 << 10;
// What hier's allreduce timing counts for beside hier_leader's, across hosts of two ranks each
// (AlgoSelector::timedScale). There hier's step within a host moves what hier_leader's does, while its exchange between
// hosts runs two flows on each host's link where hier_leader runs one. Over 2 hosts x 2 ranks at 10 Gbit/s the first
// call's timing put the two within 0.95-1.17x of each other in five launches of six at 256 KiB and chose hier in three,
// while back to back hier ran 1.02-1.32x hier_leader's time from 32 KiB to 1 MiB in 35 rows of 36 (6 jobs; 0.97 in the
// other) and level at 1 Gbit/s (1.00-1.03 in one job). With four ranks a host, hier's reduce-scatter within the host
// saves what hier_leader's chain moves: 0.82-0.98x from 128 KiB (docs/PERFORMANCE.md, "Sixteenth session").
constexpr double kHierBesideLeaderScale = 1.10;
// On 2 ranks, what the timing counts the figure of a plan that goes in place (cross-memory attach) by, beside other
// candidates (AlgoSelector::timedScale), up to a size per collective: the allreduce's twoshot up to
// kInPlaceWarmAllReduceMaxBytes, the reduce-scatter's oneshot up to kInPlaceWarmReduceScatterMaxBytes and the
// allgather's up to kInPlaceWarmAllGatherMaxBytes (2 ranks go in place from 8 KiB). The first call's timing reuses one
// buffer, where the system calls reach warm pages; calls whose buffers move through memory (selector_perf's rotation
// through 256 MiB) pay for reaching cold ones. On the 2-core VM, in three selector_perf jobs at 64 KiB, the timing had
// twoshot at 0.70-0.84x the ring's time (6.1-7.2 us against 8.6-8.9) and the rotation at 1.17-1.21x (22.1-24.3 us
// against 18.8-20.3), and twoshot was chosen in all three; at 32 KiB it was chosen in one of three at 1.27x the best
// forced algorithm; at 128 KiB the two ran level in the rotation. The reduce-scatter's oneshot timed at 0.81-0.86x the
// ring's time at 128-256 KiB and ran 1.07-1.27x it in the rotation (1.25-1.58x at 64 KiB), 1.10x at 512 KiB and at best
// from 1 MiB; it was chosen from 64 KiB (docs/PERFORMANCE.md, "Twenty-seventh session"). With a core per rank (16
// vCPUs) forced twoshot ran 1.34x the best at 32 KiB and 1.06x at 64 KiB in an earlier selector_perf job ("Twenty-third
// session"). The allgather's oneshot, which only writes into its peer's output, ran 1.16-1.33x the best at 32 KiB in
// the rotation (chosen in one job of three) and within 1.05x from 64 KiB. On an AMD EPYC VM the allreduce's twoshot
// timed at 0.59-0.73x its time in the rotation from 128 KiB to 1 MiB (26.6 us against 36.4 at 128 KiB, 134.7 against
// 210.4 at 1 MiB) and at 0.52-0.69x the ring's timing, and was chosen somewhere there in four selector_perf jobs of
// four, at up to 1.41x the best forced algorithm (docs/PERFORMANCE.md, "Twenty-eighth session"): so up to 1 MiB.
constexpr double kInPlaceWarmTimingScale = 1.5;
constexpr uint64_t kInPlaceWarmAllReduceMaxBytes = 1 << 20;
constexpr uint64_t kInPlaceWarmReduceScatterMaxBytes = 256 << 10;
constexpr uint64_t kInPlaceWarmAllGatherMaxBytes = 32 << 10;
// The largest size class of `kind` whose in-place plan's timing counts kInPlaceWarmTimingScale (0: none).
uint64_t InPlaceWarmTimingMaxBytes(CollKind kind);
// Where the two fastest timed candidates come out within this ratio, they are timed again (LookAgainAtCloseCall).
constexpr double kMeasureCloseCall = 1.15;

// Up to this size an allreduce runs AlgoSelector::smallSizeAlgo unless another algorithm's estimate is below its
// own divided by the margin. That is rd, but on one host of three ranks or more oneshot, where it fits. There, in the
// selector_perf tables of docs/PERFORMANCE.md ("Fourteenth session"), forced oneshot ran within 1.05x of the best
// forced algorithm from 8 B to 2 KiB, but for 8 ranks with a core per rank at 1 KiB (1.04-1.08x) and 2 KiB (1.24-1.40x,
// where rd ran 1.27-1.33x). rd ran 1.12-1.56x the best there on 4 and 8 ranks with a core per rank, 1.64-2.05x on 8
// ranks of the 2-core VM, and on its 4 ranks 1.00-1.11x in 78 rows of 81 and 1.20-1.82x in 3, where oneshot was within
// 1.05x in all 81.
// An allgather or reduce-scatter on one host runs oneshot up to this size, on 2 ranks too, whatever the model
// estimates: no call at init measures them, and the model's per-byte terms there come from other sizes. On 2 ranks of
// the VM, forced back to back (2000 calls, three launches each), rd, the model's choice, took 1.00-1.27x oneshot's time
// in the allgather and 1.00-1.36x in the reduce-scatter from 8 B to 4 KiB (0.78 us against 1.06 at 4 KiB, where rd's
// per-byte scale, measured at 128 KiB, put rd's estimate 1.38x under oneshot's); at 8 KiB the allgather's rd ran
// 1.2x faster. On 4 ranks rd ran 1.02-1.05x oneshot's time from 16 B to 2 KiB in both (docs/PERFORMANCE.md,
// "Seventeenth and Eighteenth sessions"). The allgather's up to kSmallAllGatherBytes only: at 4 KiB on 2 ranks rd or
// rhd ran 1.15-1.24x faster than oneshot in four selector_perf jobs of five (its calls moving through 256 MiB), level
// in all_gather_perf's (1.04 us against 1.01).
constexpr uint64_t kSmallAllReduceBytes = 4 << 10;
constexpr uint64_t kSmallAllGatherBytes = 2 << 10;
// On one host of 2 ranks an allreduce runs oneshot up to this size, whatever the model estimates (rd by the margin
// above it). The calibration times the two within each other's spread there (oneshot 0.5-0.6 us, rd 0.4-0.5, six
// launches of the VM), and the margin kept rd; back to back on the VM the two ran level up to 2 KiB and rd faster at
// 4 and 8 KiB (1.44 us against 1.57, 2.27 against 2.68), while in selector_perf's tables oneshot ran 1.10-1.19x faster
// than rd from 8 B to 512 B (1.08x at 1 KiB) and rd was the best forced algorithm at 2 and 4 KiB in four jobs of
// four, and with a core per rank oneshot ran 1.13-1.18x faster from 8 B to 128 B (docs/PERFORMANCE.md, "Fourteenth
// session" and "Nineteenth session"). Since the window's lines are claimed for the next call (kClaimWindowMaxBytes),
// oneshot's 2 KiB on the VM takes 0.78-0.84 us back to back against rd's 1.13-1.28 (1.14-1.17 us before), and in two
// selector_perf jobs 1.2 us against 1.4, where rd kept it; at 4 KiB 1.29-1.37 us against 1.52-1.58 back to back, level
// in selector_perf (docs/PERFORMANCE.md, "Twenty-seventh session"). So up to 2 KiB. On another machine the order
// turns (an AMD EPYC VM: rd 1.04-1.67x faster back to back from 8 B to 2 KiB), so those classes are timed against rd at
// their first call (AlgoSelector::smallOverridesRd), oneshot kept unless rd times kSmallAllReduceMargin faster.
constexpr uint64_t kTwoRankOneshotAllReduceBytes = 2 << 10;
constexpr double kSmallAllReduceMargin = 1.25;
// The allreduce's timing counts rd by kSmallAllReduceMargin beside oneshot up to this size; its 1 and 2 KiB classes are
// timed level. There the timing and calls moving through memory agree on the AMD EPYC VM: in 42 2-rank selector_perf
// jobs (8 B - 8 KiB, calls through 256 MiB) rd timed faster than oneshot at 1 KiB in every one (1.08-1.8x), and forced
// oneshot ran 1.00-1.33x rd's time (median 1.14); at 2 KiB the margin had kept oneshot in 4 jobs of 14, at 1.17-1.34x
// rd, and at 1 KiB in 6 of 28, at 1.00-1.16x (docs/PERFORMANCE.md, "Thirty-second session"). The Intel VM's tables ran
// oneshot 1.08x faster than rd at 1 KiB (inside the 10%) and 1.17x at 2 KiB, where it also ran faster back to back (see
// above). At 512 B and below, where they ran oneshot 1.10-1.19x faster while the timing put rd ahead, the margin stays.
constexpr uint64_t kSmallAllReduceMarginMaxBytes = 512;
// On one host of 3 to kCorePerRankWindowMaxRanks ranks, each with a core of its own, an allreduce up to
// kSmallAllReduceBytes runs oneshot up to kCorePerRankOneshotAllReduceBytes and twoshot above, whatever the model
// estimates, and its classes are not timed. There the window algorithms exchange once through shared memory where rd
// hands off log2(p) times, and twoshot reads 1/p of what oneshot reads. The calibration times the small calls at one
// size (16-32 B), where rd and oneshot ran level, and the model's per-byte terms gave rd 1-4 KiB on 8 ranks. On a
// machine with 16 vCPUs, selector_perf with the model's choices had 0, 1, 0 sizes of 12 (8 B - 16 KiB) over 1.10x the
// best forced algorithm on 4 ranks and 4, 2, 3 on 8 ranks (rd at 256 B - 4 KiB, 1.14-1.39x); with this rule 0, 0, 0
// and 0, 1, 1 (the 4 KiB class, then still timed, given to rd) (docs/PERFORMANCE.md, "Twenty-fourth session"). Only
// 4 and 8 ranks were measured; beyond 8 the model decides.
constexpr uint64_t kCorePerRankOneshotAllReduceBytes = 1 << 10;
constexpr int kCorePerRankWindowMaxRanks = 8;

// What serves `kind` when the model finds nothing: the foundation's ring, chain or pairwise.
AlgoId DefaultAlgo(CollKind kind);

}  // namespace strata
