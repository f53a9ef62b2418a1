// Plan: what one rank does for one collective, as plain data. Algorithms produce plans; the
// executor runs them over connections; the plan simulator runs all ranks' plans in one process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/strata.h"

namespace strata {

// The primitives. Every step moves `count` elements in slot-sized pieces; "in" is the next slot
// received from recvPeer, "out" a free slot of the FIFO to sendPeer.
enum class StepOp : uint8_t {
  Send,                // out = src
  Recv,                // dst = in
  RecvReduce,          // dst = src (op) in
  RecvReduceSend,      // out = src (op) in
  RecvReduceCopySend,  // dst = src (op) in; out = dst
  RecvCopySend,        // dst = in; out = in
  Copy,                // dst = src (local)
  LocalReduce,         // dst = dst (op) src (local)
  // Peer-mapped windows (the direct one-shot and two-shot algorithms). `count` is the stage, 1-3.
  Signal,    // raise this rank's window flag to the call's stage `count`, and wake the peers it waits on
  WaitPeer,  // wait until rank recvPeer's window flag reaches stage `count` of this call
  // A hint with no effect on the data: claim `count` elements from dst.offset of this rank's window (dst) for writing,
  // in the half the next call uses, so that the next call's writes do not wait for the peers' copies of those lines to
  // be invalidated. Only after every peer's stage-1 flag of this call is up: they are done with that half then.
  ClaimWindow,
  // Cross-memory attach (the direct algorithms above the window's size): `peer` is a buffer (kSendBuf or kRecvBuf)
  // of rank recvPeer's call (reads) or sendPeer's (writes), which that rank published with its stage-1 signal.
  PeerRead,    // dst = peer
  PeerReduce,  // dst = src (op) peer
  PeerWrite,   // peer = src
};
const char* StepOpName(StepOp op);

// An element offset into one of the buffers the plan is bound to at execution.
struct BufRef {
  uint16_t buf = 0;
  uint64_t offset = 0;  // in elements
};

// Buffer ids of a single collective; group plans add one per operation. Id kWindowBuf + r is rank
// r's peer-mapped window (the half this call uses), which the executor finds through the connection
// table, so callers bind only the first three.
enum : uint16_t { kSendBuf = 0, kRecvBuf = 1, kScratchBuf = 2, kWindowBuf = 0x8000 };

struct Step {
  StepOp op = StepOp::Copy;
  bool postDivide = false;  // divide by Plan::divisor when writing the result (average)
  int32_t recvPeer = -1;
  int32_t sendPeer = -1;
  BufRef src;
  BufRef dst;
  BufRef peer;  // PeerRead, PeerReduce, PeerWrite: the other rank's buffer
  uint64_t count = 0;
  // The step starts once queue `waitQueue` of the plan has done `waitSteps` steps (-1: no wait): a phase
  // that needs what another queue of this rank produced, so that queues over different connections can
  // run the phases of a pipeline side by side.
  int32_t waitQueue = -1;
  uint32_t waitSteps = 0;
};

// Steps of one queue run in order; queues run concurrently (the executor interleaves them).
struct PlanQueue {
  int channel = 0;
  std::vector<Step> steps;
};

struct Plan {
  std::string algorithm;  // e.g. "ring", "direct", "pairwise", "chain"
  strataDataType_t dtype = strataFloat32;
  strataRedOp_t op = strataSum;
  int divisor = 1;      // for steps with postDivide
  int nBuffers = 2;     // buffer ids used: 0 .. nBuffers-1
  uint64_t scratchElems = 0;  // elements of the communicator's scratch buffer (id kScratchBuf) it needs
  uint64_t windowElems = 0;   // elements of every rank's window it uses (0: it uses none)
  // Elements of every rank's send buffer its peers reach by cross-memory attach (0: none). Such a plan uses the
  // windows' flags, not their memory.
  uint64_t peerElems = 0;
  std::vector<PlanQueue> queues;

  PlanQueue& addQueue(int channel) {
    queues.push_back(PlanQueue{channel, {}});
    return queues.back();
  }
  // One JSON object, for logs, golden files and strata-info.
  std::string toJson() const;
};

}  // namespace strata
