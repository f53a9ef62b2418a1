#include "core/call_trial.h"

#include <algorithm>

namespace strata {

CallTrial::CallTrial(int plans)
    : n_(std::clamp(plans, 2, kMaxPlans)), us_(static_cast<size_t>(n_)), counts_(static_cast<size_t>(n_), 0) {}

int CallTrial::Turn(int plans, int call) {
  const int turn = call / kCallsPerTurn;
  const int round = turn / plans, pos = turn % plans;
  const int i = round % 2 ? plans - 1 - pos : pos;
  // Two plans rotate every other round (ABBA BAAB): rotating every round would undo the reversal.
  return (i + (plans == 2 ? round / 2 : round)) % plans;
}

void CallTrial::begin() {
  if (!decided_ || ++sinceDecided_ <= kRetrialCalls) return;
  decided_ = false;
  calls_ = 0;
  std::fill(counts_.begin(), counts_.end(), 0);
}

int CallTrial::next() const {
  if (decided_) return winner_;
  return Turn(n_, std::min(calls_, Calls(n_) - 1));
}

void CallTrial::record(double us) {
  if (decided_ || due()) return;
  const int call = calls_++;
  if (!Counted(call)) return;
  const int p = Turn(n_, call);
  us_[p][counts_[p]++] = us;
}

std::vector<double> CallTrial::mine() const {
  std::vector<double> out(static_cast<size_t>(n_));
  for (int p = 0; p < n_; ++p) {
    std::array<double, kCallsPerPlan> v = us_[p];
    std::sort(v.begin(), v.end());
    out[p] = (v[(kCallsPerPlan - 1) / 2] + v[kCallsPerPlan / 2]) / 2;
  }
  return out;
}

void CallTrial::settle(const std::vector<double>& summed) {
  winner_ = 0;
  for (int p = 1; p < n_ && p < static_cast<int>(summed.size()); ++p)
    if (summed[p] < summed[winner_]) winner_ = p;
  decided_ = true;
  sinceDecided_ = 0;
}

}  // namespace strata
