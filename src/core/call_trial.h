// CallTrial: which of a few plans runs a stream of like calls faster, decided on the calls themselves.
//
// The first calls() calls take turns among the plans in rounds of one turn each: round r runs the plans in their
// order rotated by r, backwards in odd rounds (two plans rotate by r / 2: ABBA BAAB), so that no plan always runs
// first, last or after the same one. A turn is a few calls of its plan in a row (Shape), and all but its first count:
// the first call after another plan's runs slower than the calls after it, as no call of a stream of one plan's calls
// does (4 ranks on 2 cores, 1 MiB: twoshot's first call of a turn 1012 us, its second and third 687 and 704, where the
// ring's ran 910 and 985; docs/PERFORMANCE.md, "Thirty-seventh session"). Each rank times its own calls; the ranks then
// gather mine() (each plan's median of its counted calls: one call that met a page fault or a stall does not decide)
// and settle() on the sums, so every rank runs the same plan from then on. The machine's pace changes while a job
// runs, so kRetrialCalls calls after a decision the trial starts over: calls() / plans() calls of each other plan in
// about every kRetrialCalls.
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
  // How a trial's calls fall into turns: the turns of each plan (one a round) and the calls of a turn, all but the
  // first counted.
  struct Shape {
    int turnsPerPlan;
    int callsPerTurn;
    constexpr int counted() const { return turnsPerPlan * (callsPerTurn - 1); }
    constexpr int callsPerPlan() const { return turnsPerPlan * callsPerTurn; }
  };
  // Four turns of two calls, the second counted.
  static constexpr Shape kPairTurns{4, 2};
  // Two turns of four calls, the last three counted: as many calls as kPairTurns, in runs long enough to show a
  // stream of one plan's calls (see Communicator::kClassTrialTurns).
  static constexpr Shape kRunTurns{2, 4};
  static constexpr int kMaxCounted = 16;
  static constexpr int kRetrialCalls = 1024;
  static constexpr int kMaxPlans = 8;

  // A trial among `plans` plans (2 to kMaxPlans; others are clamped into that range) in `shape`'s turns (1 to
  // kMaxCounted counted calls a plan, at least 2 calls a turn; others are clamped into that range).
  explicit CallTrial(int plans = 2, Shape shape = kPairTurns);

  int plans() const { return n_; }
  // A call of the stream is about to run: counts it, and starts the trial over where kRetrialCalls calls have run
  // since the last decision.
  void begin();
  // The plan the next call runs: the trial's turn, or the winner once decided.
  int next() const;
  // The call next() named took `us` on this rank (ignored once decided, or while due).
  void record(double us);
  // Every trial call has run: the ranks must now gather mine() and settle().
  bool due() const { return !decided_ && calls_ == calls(); }
  // This rank's median time of each plan, by index.
  std::vector<double> mine() const;
  // Decides from every rank's mine() summed (one figure per plan): the plan of least sum, the lower index on a tie.
  void settle(const std::vector<double>& summed);
  bool decided() const { return decided_; }
  int winner() const { return winner_; }
  const Shape& shape() const { return shape_; }
  // The calls of this trial, and the counted calls of each plan.
  int calls() const { return Calls(n_, shape_); }
  int counted() const { return shape_.counted(); }
  // The calls of a trial among `plans` plans in `shape`'s turns.
  static int Calls(int plans, Shape shape) { return plans * shape.callsPerPlan(); }
  // The plan the trial's call number `call` (0-based) runs, and whether its time counts.
  static int Turn(int plans, int call, Shape shape);
  static bool Counted(int call, Shape shape) { return call % shape.callsPerTurn != 0; }

 private:
  int n_;
  Shape shape_;
  std::vector<std::array<double, kMaxCounted>> us_;
  std::vector<int> counts_;
  int calls_ = 0;
  int sinceDecided_ = 0;
  bool decided_ = false;
  int winner_ = 0;
};

}  // namespace strata
