#include "core/call_trial.h"

#include <algorithm>

namespace strata {

namespace {

CallTrial::Shape Clamped(CallTrial::Shape s) {
  s.callsPerTurn = std::clamp(s.callsPerTurn, 2, CallTrial::kMaxCounted + 1);
  s.turnsPerPlan = std::clamp(s.turnsPerPlan, 1, CallTrial::kMaxCounted / (s.callsPerTurn - 1));
  return s;
}

}  // namespace

CallTrial::CallTrial(int plans, Shape shape)
    : n_(std::clamp(plans, 2, kMaxPlans)),
      shape_(Clamped(shape)),
      us_(static_cast<size_t>(n_)),
      counts_(static_cast<size_t>(n_), 0) {}

int CallTrial::Turn(int plans, int call, Shape shape) {
  const int turn = call / shape.callsPerTurn;
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
  return Turn(n_, std::min(calls_, calls() - 1), shape_);
}

void CallTrial::record(double us) {
  if (decided_ || due()) return;
  const int call = calls_++;
  if (!Counted(call, shape_)) return;
  const int p = Turn(n_, call, shape_);
  us_[p][counts_[p]++] = us;
}

std::vector<double> CallTrial::mine() const {
  std::vector<double> out(static_cast<size_t>(n_));
  const int k = counted();
  for (int p = 0; p < n_; ++p) {
    std::array<double, kMaxCounted> v = us_[p];
    std::sort(v.begin(), v.begin() + k);
    out[p] = (v[(k - 1) / 2] + v[k / 2]) / 2;
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
