// What algorithms are asked to plan: a collective on this communicator's geometry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "strata/strata.h"

namespace strata {

enum class CollKind : uint8_t { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll };
const char* CollKindName(CollKind kind);

struct CollDesc {
  CollKind kind = CollKind::AllReduce;
  // Elements per rank as the API counts them: allreduce/broadcast/reduce the buffer, allgather the
  // send count, reduce-scatter the receive count, alltoall the block exchanged with each peer.
  uint64_t count = 0;
  strataDataType_t dtype = strataFloat32;
  strataRedOp_t op = strataSum;
  int root = 0;
};

// The shape of the connections the plan will run over, identical on every rank (rank 0's values).
struct PlanGeometry {
  int nranks = 1;
  int rank = 0;
  size_t slotBytes = 128 << 10;
  int nslots = 8;
  int nchannels = 1;
  size_t directMaxBytes = 16 << 10;  // allreduce at or below: whole-buffer exchange
  // Each half of every rank's peer-mapped window (oneshot, twoshot); 0 when the ranks cannot map each
  // other's memory (TCP, several hosts, STRATA_WINDOW_BYTES=0).
  size_t windowBytes = 0;
  // Host index of every rank (hosts numbered in order of their first rank), for the hierarchical
  // plans; empty when unknown, which they treat as one host.
  std::vector<int> hostOf;
};

}  // namespace strata
