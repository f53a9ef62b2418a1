// The algorithm table: every algorithm strata can run, in one place (id, name, description, the
// collectives it serves and its constraints), and the generator of each (algorithm, collective).
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/collective.h"
#include "algorithms/plan.h"

namespace strata {

enum class AlgoId : uint8_t { Ring, Chain, Direct, Tree, Rd, Rhd, OneShot, TwoShot, Hier, HierLeader, Pairwise };
constexpr int kNumAlgos = 11;
constexpr int kNumCollKinds = 6;

// Bit of a CollKind in AlgoInfo::collectives.
constexpr uint32_t CollBit(CollKind k) { return 1u << static_cast<int>(k); }

using PlanGenerator = Plan (*)(const CollDesc& desc, const PlanGeometry& geo);

struct AlgoInfo {
  AlgoId id;
  const char* name;         // as STRATA_ALGO, the config field and the perf tools' -A spell it
  const char* description;  // one line, for strata-info and docs/ALGORITHMS.md
  uint32_t collectives;     // CollBit()s of the collectives it serves
  const char* constraints;  // what it needs; where a shape does not fit, what runs instead
  bool implemented;         // false: named and costed, but no plan generator yet (cannot be forced)
};

// Every algorithm, in AlgoId order.
const AlgoInfo (&AlgoTable())[kNumAlgos];
const AlgoInfo& GetAlgoInfo(AlgoId id);
// Exact (lowercase) name lookup; false when unknown.
bool AlgoByName(const std::string& name, AlgoId* out);
bool AlgoServes(AlgoId id, CollKind kind);
// oneshot and twoshot: every rank reads its peers' data from their peer-mapped windows.
inline bool IsWindowAlgo(AlgoId id) { return id == AlgoId::OneShot || id == AlgoId::TwoShot; }
// "allreduce, broadcast, reduce": the collectives `id` serves, by their STRATA_ALGO names.
std::string AlgoCollectivesText(AlgoId id);
// "ring, chain, ...": every name, for error messages.
std::string AlgoNamesText();

// STRATA_ALGO's name of a collective ("allreduce", "reducescatter", ...).
const char* CollKindKey(CollKind kind);
bool CollKindByKey(const std::string& key, CollKind* out);

// This rank's plan of `desc` with algorithm `id`, which must serve the collective and be implemented.
// Shapes an algorithm does not fit (one host for hier, too few ranks for a double tree) get the
// documented fallback; the plan's `algorithm` names what actually runs.
Plan BuildPlanWith(AlgoId id, const CollDesc& desc, const PlanGeometry& geo);

}  // namespace strata
