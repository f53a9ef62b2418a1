#include <cstdint>
#include <vector>

#include "api/group.h"

namespace strata {
namespace {

struct GroupOp {
  strataComm* comm;
  bool p2p;
  P2POp p2pOp;
  CollDesc desc;
  const void* send;
  void* recv;
  bool hasQuant;  // the call's own quantization spec (an Ex call with options)
  QuantSpec quant;
  bool barrier = false;  // send and recv unset: the barrier's element lives in RunGroup
};

thread_local int tls_depth = 0;
thread_local std::vector<GroupOp> tls_ops;

// Runs the recorded operations: collectives in call order; all send/recv of one communicator as one
// plan, at the position of its first send/recv.
Status RunGroup(std::vector<GroupOp>& ops) {
  std::vector<bool> used(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (used[i]) continue;
    CommGuard c(ops[i].comm, CommGuard::kMovesData);
    STRATA_CHECK(c.status());
    if (ops[i].barrier) {
      int32_t in = 0, out = 0;
      STRATA_CHECK(c->runCollective(ops[i].desc, &in, &out, nullptr));
      continue;
    }
    if (!ops[i].p2p) {
      STRATA_CHECK(c->runCollective(ops[i].desc, ops[i].send, ops[i].recv, ops[i].hasQuant ? &ops[i].quant : nullptr));
      continue;
    }
    std::vector<P2POp> p2p;
    for (size_t j = i; j < ops.size(); ++j) {
      if (ops[j].p2p && ops[j].comm == ops[i].comm) {
        p2p.push_back(ops[j].p2pOp);
        used[j] = true;
      }
    }
    STRATA_CHECK(c->runP2P(p2p));
  }
  return Status::Ok();
}

}  // namespace

bool InGroup() { return tls_depth > 0; }

void GroupAddP2P(strataComm* comm, const P2POp& op) {
  tls_ops.push_back(GroupOp{comm, true, op, {}, nullptr, nullptr, false, {}});
}

void GroupAddCollective(strataComm* comm, const CollDesc& desc, const void* send, void* recv, const QuantSpec* quant) {
  tls_ops.push_back(GroupOp{comm, false, {}, desc, send, recv, quant != nullptr, quant ? *quant : QuantSpec{}});
}

void GroupAddBarrier(strataComm* comm, const CollDesc& desc) {
  tls_ops.push_back(GroupOp{comm, false, {}, desc, nullptr, nullptr, false, {}, true});
}

}  // namespace strata

extern "C" {

strataResult_t strataGroupStart(void) {
  ++strata::tls_depth;
  return strataSuccess;
}

strataResult_t strataGroupEnd(void) {
  if (strata::tls_depth == 0)
    return strata::ReturnStatus(
        strata::MakeError(strataInvalidUsage, "strataGroupEnd called without a matching strataGroupStart"));
  if (--strata::tls_depth > 0) return strataSuccess;
  std::vector<strata::GroupOp> ops;
  ops.swap(strata::tls_ops);
  return strata::ReturnStatus(strata::RunGroup(ops));
}

}  // extern "C"
