#include "core/in_place_trial.h"

#include <algorithm>

namespace strata {

namespace {
// ABBA BAAB: each plan runs first in a pair as often as second, and after itself as often as after the other.
constexpr InPlaceTrial::Plan kOrder[2 * InPlaceTrial::kCallsPerPlan] = {
    InPlaceTrial::kInPlace,   InPlaceTrial::kSelectors, InPlaceTrial::kSelectors, InPlaceTrial::kInPlace,
    InPlaceTrial::kSelectors, InPlaceTrial::kInPlace,   InPlaceTrial::kInPlace,   InPlaceTrial::kSelectors};
}  // namespace

void InPlaceTrial::begin() {
  if (!decided_ || ++sinceDecided_ <= kRetrialCalls) return;
  decided_ = false;
  calls_ = 0;
  counts_ = {0, 0};
}

InPlaceTrial::Plan InPlaceTrial::next() const {
  if (decided_) return winner_;
  return kOrder[std::min(calls_, 2 * kCallsPerPlan - 1)];
}

void InPlaceTrial::record(double us) {
  if (decided_ || due()) return;
  const Plan p = kOrder[calls_++];
  us_[p][counts_[p]++] = us;
}

std::array<double, 2> InPlaceTrial::mine() const {
  std::array<double, 2> out{};
  for (int p = 0; p < 2; ++p) {
    std::array<double, kCallsPerPlan> v = us_[p];
    std::sort(v.begin(), v.end());
    out[p] = (v[(kCallsPerPlan - 1) / 2] + v[kCallsPerPlan / 2]) / 2;
  }
  return out;
}

void InPlaceTrial::settle(const std::array<double, 2>& summed) {
  winner_ = summed[kInPlace] <= summed[kSelectors] ? kInPlace : kSelectors;
  decided_ = true;
  sinceDecided_ = 0;
}

}  // namespace strata
