// Group calls: between strataGroupStart and strataGroupEnd, operations are recorded per thread and
// run together at the outermost strataGroupEnd.
#pragma once

#include <functional>

#include "api/comm_handle.h"

namespace strata {

bool InGroup();
// Records a send or receive of the current group.
void GroupAddP2P(strataComm* comm, const P2POp& op);
// Records a collective of the current group (run in call order at GroupEnd), with the call's own
// quantization spec when it has one.
void GroupAddCollective(strataComm* comm, const CollDesc& desc, const void* send, void* recv,
                        const QuantSpec* quant = nullptr);
// Records a barrier (`desc`: its one-element allreduce), which runs at GroupEnd in call order on buffers the group
// provides: the caller's frame is gone by then.
void GroupAddBarrier(strataComm* comm, const CollDesc& desc);

}  // namespace strata
