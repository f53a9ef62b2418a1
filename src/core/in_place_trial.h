// InPlaceTrial: whether a call shape whose every rank's buffers its peers reach (strataMemAlloc, huge pages) runs the
// in-place plan (twoshot, oneshot) or the selector's, decided on the calls themselves.
//
// Which of the two is faster depends on the buffers and on the moment, not on the size alone: on 2 ranks of the AMD
// EPYC development VM at 8 MiB, in place, the in-place twoshot ran 0.82-1.34 ms where the forced ring ran 0.78-0.90
// in launches minutes apart, and 1.20-1.54 ms against 1.61-1.76 in others; out of place, on the first part of 32 MiB
// buffers, 2.3-2.7 ms (7.2-7.4 in three launches of nine) against 1.9-2.1 (docs/PERFORMANCE.md, "Thirtieth
// session"). The selector's timing cannot tell: it runs on buffers of its own. So the first kCallsPerPlan * 2 calls of
// a shape alternate between the two plans (ABBA BAAB, so that neither always runs first or warmer), each rank times its
// own, the ranks add up their medians, and the faster plan runs from then on.
//
// The caller keeps one trial per shape and placement (in place, out of place, mixed among the ranks), counts only
// the calls every rank runs by it (so the trials of all ranks stay in step), and gathers the ranks' figures when
// due() says so.
#pragma once

#include <array>
#include <cstdint>

namespace strata {

class InPlaceTrial {
 public:
  enum Plan { kSelectors = 0, kInPlace = 1 };
  // Calls of each plan in a trial: the median of four takes out a call that met a collapse or a page fault.
  static constexpr int kCallsPerPlan = 4;

  // The plan the next call runs: the trial's turn, or the winner once decided.
  Plan next() const;
  // The call next() named took `us` on this rank (ignored once decided, or while due).
  void record(double us);
  // Every trial call has run: the ranks must now gather mine() and settle().
  bool due() const { return !decided_ && calls_ == 2 * kCallsPerPlan; }
  // This rank's median time of each plan, by Plan.
  std::array<double, 2> mine() const;
  // Decides from every rank's mine(), summed: the in-place plan where it took no longer than the selector's.
  void settle(const std::array<double, 2>& summed);
  bool decided() const { return decided_; }

 private:
  std::array<std::array<double, kCallsPerPlan>, 2> us_{};
  std::array<int, 2> counts_{};
  int calls_ = 0;
  bool decided_ = false;
  Plan winner_ = kInPlace;
};

}  // namespace strata
