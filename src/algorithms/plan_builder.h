// Small helpers shared by the plan generators.
#pragma once

#include "algorithms/collective.h"
#include "algorithms/plan.h"

namespace strata {

// Appends a step unless it moves nothing: a zero-count step is a no-op on both sides of a
// connection, and every rank derives the same counts, so skipping it keeps both sides matched.
inline void Emit(PlanQueue& q, StepOp op, int recvPeer, int sendPeer, BufRef src, BufRef dst, uint64_t count,
                 bool postDivide = false) {
  if (count == 0) return;
  Step s;
  s.op = op;
  s.recvPeer = recvPeer;
  s.sendPeer = sendPeer;
  s.src = src;
  s.dst = dst;
  s.count = count;
  s.postDivide = postDivide;
  q.steps.push_back(s);
}

inline BufRef Ref(uint16_t buf, uint64_t offset) { return BufRef{buf, offset}; }

// A plan with the collective's type, op and averaging divisor filled in.
Plan NewPlan(const char* algorithm, const CollDesc& desc, const PlanGeometry& geo);

// n == 1: every collective is a local copy of `count` elements.
Plan SingleRankPlan(const CollDesc& desc, const PlanGeometry& geo, uint64_t count);

inline int Mod(int a, int n) { return ((a % n) + n) % n; }

}  // namespace strata
