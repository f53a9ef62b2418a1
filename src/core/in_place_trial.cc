#include "core/in_place_trial.h"

namespace strata {

std::array<double, 2> InPlaceTrial::mine() const {
  const std::vector<double> m = t_.mine();
  std::array<double, 2> out{};
  out[kInPlace] = m[0];
  out[kSelectors] = m[1];
  return out;
}

}  // namespace strata
