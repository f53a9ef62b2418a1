// Forcing algorithms: the STRATA_ALGO syntax (also the config field's), parsed by a pure function.
//
//   spec  := ""  |  entry (';' entry)*        spaces around tokens are ignored, names are case-blind
//   entry := name  |  collective ':' name     collective: allreduce broadcast reduce allgather
//                                             reducescatter (or reduce_scatter) alltoall
//
// A bare name forces that algorithm on every collective it serves (at most one bare name); an entry
// for a collective overrides it. Errors (strataInvalidArgument, with the reason): an empty entry,
// an unknown name or collective, a collective named twice, two bare names, an algorithm that does
// not serve the collective named with it, an algorithm that is not implemented yet.
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/algorithm_table.h"
#include "core/status.h"

namespace strata {

struct ForcedAlgos {
  int8_t algo[kNumCollKinds] = {-1, -1, -1, -1, -1, -1};  // AlgoId per CollKind, -1: not forced

  bool get(CollKind kind, AlgoId* out) const {
    const int8_t a = algo[static_cast<int>(kind)];
    if (a < 0) return false;
    *out = static_cast<AlgoId>(a);
    return true;
  }
  bool any() const;
  // Canonical form, "allreduce:ring;broadcast:tree" ("" when nothing is forced).
  std::string toString() const;
};

Status ParseAlgoSpec(const std::string& text, ForcedAlgos* out);

}  // namespace strata
