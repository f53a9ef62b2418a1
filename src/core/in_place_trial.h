// InPlaceTrial: whether a call shape whose every rank's buffers its peers reach (strataMemAlloc, huge pages) runs the
// in-place plan (twoshot, oneshot) or the selector's, decided on the calls themselves.
//
// Which of the two is faster depends on the buffers and on the moment, not on the size alone: on 2 ranks of the AMD
// EPYC development VM at 8 MiB, in place, the in-place twoshot ran 0.82-1.34 ms where the forced ring ran 0.78-0.90
// in launches minutes apart, and 1.20-1.54 ms against 1.61-1.76 in others; out of place, on the first part of 32 MiB
// buffers, 2.3-2.7 ms (7.2-7.4 in three launches of nine) against 1.9-2.1 (docs/PERFORMANCE.md, "Thirtieth
// session"). The selector's timing cannot tell: it runs on buffers of its own. So the first
// CallTrial::Calls(2, CallTrial::kPairTurns) calls of a shape take turns between the two plans (ABBA BAAB, so that
// neither always runs first or warmer; each turn two calls, the second counted), each rank times its own, the ranks
// add up their medians, and the faster plan runs until the trial starts over (below).
//
// The machine's pace changes while a job runs (on the VM the 1 MiB ring ran 65-82 us a call for some launches and
// 252-306 us for the next ones, minutes later), so a decided trial starts over after kRetrialCalls more calls, as the
// slot-store tuner tries its other mode now and then: 8 calls of the slower plan in every 1040 or so.
//
// The caller keeps one trial per shape and placement (in place, out of place, mixed among the ranks), calls begin()
// before each call every rank runs by it (so the trials of all ranks stay in step), and gathers the ranks' figures
// when due() says so.
#pragma once

#include <array>
#include <cstdint>

#include "core/call_trial.h"

namespace strata {

// A CallTrial of two plans, the in-place plan first (it runs the first call, and wins a tie).
class InPlaceTrial {
 public:
  enum Plan { kSelectors = 0, kInPlace = 1 };
  // Counted calls of each plan in a trial: the median of four takes out a call that met a collapse or a page fault.
  static constexpr int kCallsPerPlan = CallTrial::kPairTurns.counted();
  // Calls after a decision until the trial starts over.
  static constexpr int kRetrialCalls = CallTrial::kRetrialCalls;

  // A call of the shape is about to run: counts it, and starts the trial over where kRetrialCalls calls have run
  // since the last decision.
  void begin() { t_.begin(); }
  // The plan the next call runs: the trial's turn, or the winner once decided.
  Plan next() const { return PlanOf(t_.next()); }
  // The call next() named took `us` on this rank (ignored once decided, or while due).
  void record(double us) { t_.record(us); }
  // Every trial call has run: the ranks must now gather mine() and settle().
  bool due() const { return t_.due(); }
  // This rank's median time of each plan, by Plan.
  std::array<double, 2> mine() const;
  // Decides from every rank's mine(), summed: the in-place plan where it took no longer than the selector's.
  void settle(const std::array<double, 2>& summed) { t_.settle({summed[kInPlace], summed[kSelectors]}); }
  bool decided() const { return t_.decided(); }

 private:
  // The trial's plan 0 is the in-place one.
  static Plan PlanOf(int index) { return index == 0 ? kInPlace : kSelectors; }
  CallTrial t_{2, CallTrial::kPairTurns};
};

}  // namespace strata
