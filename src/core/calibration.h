// The cost model's inputs for one communicator: the shape (ranks, hosts) from its geometry, link
// costs from a short measurement made when it is created (a few ring allreduces and local
// reduce/copy loops), agreed by every rank so that all of them choose the same algorithms.
#pragma once

#include <functional>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/cost_model.h"
#include "algorithms/plan.h"
#include "core/status.h"

namespace strata {

// Shape and defaults without measuring: hosts from geo.hostOf, the documented default link costs.
CostInputs CostInputsFromGeometry(const PlanGeometry& geo);

// The small allreduce the calibration times every small-message algorithm with: one float per rank, at least
// 8 bytes (fewer elements than ranks would leave ring steps out).
uint64_t SmallCalibrationBytes(int nranks);

// Runs one plan on every rank of the communicator (send, recv: host buffers of the plan's sizes).
using PlanRunner = std::function<Status(const Plan& plan, const void* send, void* recv)>;

struct CalibrationReport {
  double ringSmallUs = 0;  // `smallBytes` ring allreduce, per call (the median over the ranks)
  uint64_t smallBytes = 0;
  double ringLargeUs = 0;  // `largeBytes` ring allreduce
  double rhdLargeUs = 0;   // `largeBytes` rhd allreduce (rd on 2 ranks, where rhd is the ring's exchange)
  double rdLargeUs = 0;    // `largeBytes` rd allreduce, from 3 ranks on one host (else 0)
  uint64_t largeBytes = 0;
  // `wideBytes` ring and rhd (rd on 2 ranks) allreduce, between hosts where the `largeBytes` ring is not link-bound
  // (else 0)
  double ringWideUs = 0;
  double recursiveWideUs = 0;
  uint64_t wideBytes = 0;
  double ringMidUs = 0;  // `midBytes` ring allreduce (two ranks on one host only, else 0)
  double rdMidUs = 0;    // `midBytes` rd allreduce
  uint64_t midBytes = 0;
  // `largeBytes` in-place twoshot (cross-memory attach) and the ring beside it, lined up and settled (up to 4 ranks on
  // one host where the ranks copy in place, else 0)
  double peerLargeUs = 0;
  double peerRingUs = 0;
  // This rank's 1 MiB ring with ordinary and with streaming stores into the shared slots (SlotStoreProbe; 0: not
  // probed), and which it starts the slot-store tuner in
  double slotCachedUs = 0;
  double slotStreamingUs = 0;
  bool slotStreaming = false;
  double elapsedMs = 0;    // the whole calibration on this rank
  double localMs = 0;      // of which the buffers, plans and local rates (before the ranks line up, or just after)
  double waitMs = 0;       // of which waiting for the last rank to arrive (a small ring allreduce that lines them up)
  double smallMs = 0;      // the small calls of every algorithm
  double largeMs = 0;      // and the `largeBytes` (and `midBytes`) calls
  double wideMs = 0;       // and the `wideBytes` calls (between hosts)
};

// How the calibration writes the shared slots one way and then the other (SlotStoreTuner): `run` runs a plan with
// streaming (non-temporal) or ordinary stores into them, whatever the tuner would choose, and `startIn` hears which
// one ran this rank's 1 MiB ring faster, before the calls that follow (the calibration's own, then the selector's
// timings at a class's first call) run in the tuner's mode. Each rank decides alone, as the tuner does; the calls are
// every rank's alike, so either every rank passes a probe or none does.
struct SlotStoreProbe {
  std::function<Status(const Plan& plan, const void* send, void* recv, bool streaming)> run;
  std::function<void(bool streaming)> startIn;
};

// Measures link latency and bandwidth with ring allreduces, and this host's reduce and copy rates,
// then takes the median over the ranks of each figure (an allgather) so every rank ends with the same inputs.
// Between hosts the ring's slowest link is the network; within one host it is shared memory. On one host of up to 4
// ranks, with a `stores` probe, the 1 MiB ring first runs with ordinary and with streaming stores, lined up and
// interleaved, and the probe's `startIn` hears the faster (streaming where 1.1x faster: SlotStoreTuner::kMargin).
Status CalibrateCostInputs(const PlanGeometry& geo, const PlanRunner& run, CostInputs* inout, CalibrationReport* report,
                           const SlotStoreProbe& stores = {});

// The rounds of TimePlansAlike that fit `budgetUs` when one run of every plan takes `usPerRunOfAll` together: at most
// 5, and 0 when fewer than 2 fit.
int TimedRoundsWithin(double budgetUs, double usPerRunOfAll, bool inPlaceToo);

// Which plans to time within `budgetUs`, one run of plan i taking `usPerRun[i]`: all of them where two rounds fit;
// otherwise the plans marked `droppable` leave, the last first, until two rounds fit the rest. `*keep` gets the
// indices kept, in order; returns their rounds, 0 when two rounds fit no set of at least two plans.
int TimedPlansWithin(double budgetUs, const std::vector<double>& usPerRun, const std::vector<bool>& droppable,
                     bool inPlaceToo, std::vector<size_t>* keep);

// How TimePlansAlike times a size class's plans: once each to line the ranks up, then `rounds` rounds in which each
// runs a settling call (`settle`) and `block` calls timed back to back; with `inPlaceToo` every call is an
// out-of-place and an in-place run.
struct TimingPattern {
  int rounds = 0;  // 0: not timed
  bool settle = true;
  int block = 2;
  bool inPlaceToo = false;
};

// TimedPlansWithin's plans and rounds in the full pattern (a settling call and a block of two per round, in place too
// where `inPlaceToo`). Where that keeps fewer than two plans and `lightBudgetUs` is positive, the light pattern: the
// block of two alone, out of place only, within `budgetUs` with the same dropping of the `droppable` plans, the last
// first; where not even two fit, the plans that are not droppable alone within `lightBudgetUs` (when it is larger).
// It serves the long
// network-bound calls that the full pattern cannot fit, where the skew the previous plan left is a small part of a
// call: 2 hosts x 2 ranks at 10 Gbit/s on the 2-core VM ran hier_leader 1.27-1.48x faster than hier at 512 KiB-1
// MiB, the model's estimates of the two were within 8%, and untimed the model kept hier. (One call per round
// would fit more, but a lone call measures how late its rank came: rd timed at 627 us there, 1360 us in a table.)
// Within one host the calls are memory-bound, and warm out-of-place runs rank them as the tables' do not: 4 ranks at
// 1 MiB, oneshot timed light 1.11x faster than rd and ran 1.19-1.21x slower in the tables; there the communicator
// passes a `lightBudgetUs` of 0.
TimingPattern TimingWithin(double budgetUs, const std::vector<double>& usPerRun, const std::vector<bool>& droppable,
                           bool inPlaceToo, double lightBudgetUs, std::vector<size_t>* keep);

// Each of `plans` (one collective by several algorithms, each plan built for buffers `send` and `recv`) timed as `how`
// says (in place: `recv` as both buffers). `*us` gets each plan's time per run, the median over its rounds (the lower
// middle of an even count) and then over the ranks, so that every rank holds the same figures.
Status TimePlansAlike(const PlanGeometry& geo, const PlanRunner& run, const std::vector<Plan>& plans, const void* send,
                      void* recv, const TimingPattern& how, std::vector<double>* us);

// A second look at a close call: where the two fastest of `*us` (TimePlansAlike's figures for `plans`) are within
// `closeRatio` of each other, those two are timed again, in the pattern TimingWithin gives their measured times
// within `budgetUs` (light, within `lightBudgetUs`, where the full one does not fit), and each one's figure becomes the
// mean of its two; every other figure is multiplied by the factor the pair's sum changed by (4 ranks on the 2-core VM,
// 128 KiB: rhd and twoshot timed 66 and 72 us and again at about 120 and 112, which left rd's 88 us, timed once, the
// fastest). One timing of five rounds picks the wrong one of two close algorithms now and then on a busy machine
// (4 ranks on the 2-core development VM, 256 KiB: `twoshot` ran 1.29x faster than rd in a table whose launch had
// timed rd the faster; in six other launches the ring came within 1.09x of `twoshot` once, and once `rhd` won
// by 5%). `*again` gets the two indices timed again, fastest first (empty: none). Every rank holds the same
// `*us`, so every rank decides alike.
Status LookAgainAtCloseCall(const PlanGeometry& geo, const PlanRunner& run, const std::vector<Plan>& plans,
                            const void* send, void* recv, double budgetUs, bool inPlaceToo, double lightBudgetUs,
                            double closeRatio, std::vector<double>* us, std::vector<size_t>* again);

// Whether this rank measures the calibration's local rates (a reduction and a copy of 1 MiB): every rank, but where
// some host runs more ranks than cores (`geo.oversubscribed`), only the first rank of each host.
bool MeasuresLocalRates(const PlanGeometry& geo);

// Every rank's figures `mine` (the same count on every rank), gathered by a ring allgather run through `run`:
// `*all` holds rank r's at [r * mine.size(), (r + 1) * mine.size()).
Status GatherOverRanks(const PlanGeometry& geo, const PlanRunner& run, const std::vector<double>& mine,
                       std::vector<double>* all);

}  // namespace strata
