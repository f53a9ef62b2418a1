#include "algorithms/plan_builder.h"

namespace strata {

Plan NewPlan(const char* algorithm, const CollDesc& desc, const PlanGeometry& geo) {
  Plan plan;
  plan.algorithm = algorithm;
  plan.dtype = desc.dtype;
  plan.op = desc.op;
  plan.divisor = desc.op == strataAvg ? geo.nranks : 1;
  return plan;
}

Plan SingleRankPlan(const CollDesc& desc, const PlanGeometry& geo, uint64_t count) {
  Plan plan = NewPlan("local", desc, geo);
  Emit(plan.addQueue(0), StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kRecvBuf, 0), count);
  return plan;
}

}  // namespace strata
