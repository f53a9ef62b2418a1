// CallTrial: which of a few plans runs a stream of like calls faster, decided on the calls themselves.
//
// The first kCallsPerPlan * plans() calls take turns among the plans in rounds of one call each: round r runs the
// plans in their order rotated by r, backwards in odd rounds (two plans rotate by r / 2: ABBA BAAB), so that no plan
// always runs first, last or after the same one. Each rank times its own calls; the ranks then gather mine() (each
// plan's median of its calls: one call that met a page fault or a stall does not decide) and settle() on the sums, so
// every rank runs the same plan from then on. The machine's pace changes while a job runs, so kRetrialCalls calls after
// a decision the trial starts over: kCallsPerPlan calls of each other plan in about every kRetrialCalls.
//
// The caller keeps one trial per stream of calls that every rank makes alike, calls begin() before each call of it,
// runs the plan next() names, record()s the call's time, and gathers the ranks' figures when due() says so. The trial
// knows nothing of what the plans are.
#pragma once

#include <array>
#include <vector>

namespace strata {

class CallTrial {
 public:
  static constexpr int kCallsPerPlan = 4;
  static constexpr int kRetrialCalls = 1024;
  static constexpr int kMaxPlans = 8;

  // A trial among `plans` plans (2 to kMaxPlans; others are clamped into that range).
  explicit CallTrial(int plans = 2);

  int plans() const { return n_; }
  // A call of the stream is about to run: counts it, and starts the trial over where kRetrialCalls calls have run
  // since the last decision.
  void begin();
  // The plan the next call runs: the trial's turn, or the winner once decided.
  int next() const;
  // The call next() named took `us` on this rank (ignored once decided, or while due).
  void record(double us);
  // Every trial call has run: the ranks must now gather mine() and settle().
  bool due() const { return !decided_ && calls_ == n_ * kCallsPerPlan; }
  // This rank's median time of each plan, by index.
  std::vector<double> mine() const;
  // Decides from every rank's mine() summed (one figure per plan): the plan of least sum, the lower index on a tie.
  void settle(const std::vector<double>& summed);
  bool decided() const { return decided_; }
  int winner() const { return winner_; }
  // The plan the trial's call number `call` (0-based) runs.
  static int Turn(int plans, int call);

 private:
  int n_;
  std::vector<std::array<double, kCallsPerPlan>> us_;
  std::vector<int> counts_;
  int calls_ = 0;
  int sinceDecided_ = 0;
  bool decided_ = false;
  int winner_ = 0;
};

}  // namespace strata
