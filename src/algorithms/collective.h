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

// The elements of a call's send and receive buffers on each of `nranks` ranks (the reduce-scatter's input and the
// allgather's output hold a block per rank, the alltoall's both).
inline uint64_t SendElems(const CollDesc& d, int nranks) {
  const bool perRank = d.kind == CollKind::ReduceScatter || d.kind == CollKind::AlltoAll;
  return perRank ? d.count * static_cast<uint64_t>(nranks) : d.count;
}
inline uint64_t RecvElems(const CollDesc& d, int nranks) {
  const bool perRank = d.kind == CollKind::AllGather || d.kind == CollKind::AlltoAll;
  return perRank ? d.count * static_cast<uint64_t>(nranks) : d.count;
}

// From this size (the allreduce's buffer, the reduce-scatter's input, the allgather's output) the one/two-shot plans
// copy straight between the ranks' buffers where PlanGeometry::peerAccess allows it: below it the window's extra copy
// costs less than the system calls (2 ranks, twoshot: 2.1-2.4 us by cross-memory attach up to 8 KiB, 0.6-3.0 us
// through the window; 2.8 us and 4.9 us at 16 KiB).
constexpr uint64_t kPeerAccessMinBytes = 8 << 10;
// On 3 to kPeerAccessFewRanks ranks with a core each the plans copy in place from this size instead: there a call
// makes p-1 system calls (the allgather's writes, the reduce-scatter's reads) or 2(p-1) (the allreduce's twoshot),
// each a few microseconds.
// Through the window twoshot ran faster up to 64 KiB and level at 128 KiB (4 ranks, 8 KiB: 5.0 us through the window
// against 14.2 in place with a core per rank, 30.3 against 47.4 on the 2-core VM; 128 KiB: 40.3 against 37.3, 75.8
// against 76.9; 8 ranks with a core each, 64 KiB: 34.3 against 44.3), and the allgather's and reduce-scatter's
// oneshot faster up to 32 KiB on every machine, at 64 KiB on all but 4 ranks with a core each (the allgather 13.7
// us through the window against 10.3), and from 128 KiB faster in place with a core per rank on 4 ranks (1.09-1.6x),
// through the window on 8 ranks and on the VM (1.1-1.5x) (docs/PERFORMANCE.md, "Twenty-fourth session").
constexpr uint64_t kPeerAccessFewRanksMinBytes = 128 << 10;
// Over kPeerAccessFewRanks ranks, and on three or more where a host runs more ranks than cores, from this size: once
// the executor read the windows in pieces (docs/ALGORITHMS.md, "Reading the windows"), 8 ranks with a core each ran all
// three through the window faster at 128 KiB (twoshot 42.9-49.1 us against 53.4-71.2 in place, the allgather 19.7-23.1
// against 27.0-47.6, the reduce-scatter 23.9-25.4 against 25.5-31.4) and level at 256 KiB, where 4 ranks still ran
// faster in place from 128 KiB; 4 ranks on the 2-core VM ran the allgather and reduce-scatter 1.3-1.8x faster through
// the window at 128 KiB, twoshot level (docs/PERFORMANCE.md, "Twenty-fifth session").
constexpr uint64_t kPeerAccessManyRanksMinBytes = 256 << 10;
constexpr int kPeerAccessFewRanks = 4;
// Those sizes came from calls on one buffer, reused. Where the calls' buffers change from call to call (selector_perf's
// rotation through 256 MiB), the first size in place ran slower than the window, for the allreduce's twoshot with a
// core per rank (4 ranks at 128 KiB: 49-55 us through the window against 59-69 in place; 8 ranks at 256 KiB: 122-160
// against 164-176) and for the allgather's and reduce-scatter's oneshot on 4 ranks of the 2-core VM at 256 KiB
// (101-117 us against 121-128, 108-131 against 131-145). On one buffer, reused, those ran level there, but for the
// 4-rank allreduce with a core per rank, 11-20% faster in place. So those calls go in place from twice the size. The
// others stay: on one buffer the VM's 4-rank twoshot ran 1.2x faster in place at 256 KiB, with the window level in
// the rotation, and 4 ranks with a core each ran the allgather at 128 KiB 1.5-1.9x faster in place
// (docs/PERFORMANCE.md, "Twenty-sixth session").
constexpr uint64_t kPeerAccessLaterFactor = 2;

// What those plans reduce or write of their peers' buffers at a time: small enough to stay in cache between the reads
// and the writes (a 2-process prototype of the allreduce at 1-16 MiB: 256 KiB pieces 1.14-1.31x faster than 64 KiB).
constexpr uint64_t kPeerPieceBytes = 256 << 10;

// Through the window, a call that writes at most this many bytes of its own window claims those lines for the next
// call (StepOp::ClaimWindow). The peers' reads leave them shared in their caches, and each write of the next call
// would first wait for those copies to be invalidated. With a core per rank (16 vCPUs, three rounds) the claims took
// 4 KiB on 4 ranks from 2.98-3.41 us to 2.73-2.98 and 2 KiB from 2.17-2.37 to 1.86-2.00; from 32 KiB they ran level
// or slower (docs/PERFORMANCE.md, "Twenty-seventh session").
constexpr uint64_t kClaimWindowMaxBytes = 16 << 10;

// From this size (SelectorBytes) a call whose selected plan does not go in place asks every rank whether its buffers
// come from strataMemAlloc (one 4-byte ring allreduce: 0.65 us on 2 ranks, 25 us on 4 ranks of the 2-core development
// VM, where a 4 MiB allreduce on 2 ranks took 316-574 us), and runs the in-place plan where they all do: on 2 ranks
// of that VM at 16-256 MiB, twoshot on such buffers took 0.5-0.8x the ring's time.
constexpr uint64_t kSharedBufferAgreeMinBytes = 4 << 20;

// The least size (as above) from which the one/two-shot plans of `kind` on `nranks` copy in place: kPeerAccessMinBytes
// on 2 ranks, kPeerAccessFewRanksMinBytes on 3 to kPeerAccessFewRanks with a core each, kPeerAccessManyRanksMinBytes
// on more or where a host runs more ranks than cores (`oversubscribed`, PlanGeometry::oversubscribed); on three ranks
// or more kPeerAccessLaterFactor times that for the allreduce with a core per rank, and for the others where ranks
// share cores.
inline uint64_t PeerAccessMinBytes(CollKind kind, int nranks, bool oversubscribed) {
  if (nranks <= 2) return kPeerAccessMinBytes;
  const uint64_t from =
      nranks <= kPeerAccessFewRanks && !oversubscribed ? kPeerAccessFewRanksMinBytes : kPeerAccessManyRanksMinBytes;
  const bool later = kind == CollKind::AllReduce ? !oversubscribed : oversubscribed;
  return later ? kPeerAccessLaterFactor * from : from;
}

// Whether the one/two-shot plans of `kind` on `nranks` whose whole vector is `bytes` (as above), and whose window would
// hold `published` bytes, copy in place: where the ranks reach each other's buffers (`peerAccess`, with windows for
// their flags), from PeerAccessMinBytes on and wherever the window is too small. The plans and the cost model both ask.
inline bool CopiesInPlaceAt(bool peerAccess, uint64_t windowBytes, CollKind kind, int nranks, bool oversubscribed,
                            double bytes, double published) {
  return peerAccess && windowBytes > 0 &&
         (bytes >= static_cast<double>(PeerAccessMinBytes(kind, nranks, oversubscribed)) ||
          published > static_cast<double>(windowBytes));
}

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
  // Ranks with windows also reach each other's buffers by cross-memory attach (process_vm_readv/writev): from
  // kPeerAccessMinBytes, and beyond the window, one/two-shot copy in place (STRATA_CMA, probed at init).
  bool peerAccess = false;
  // Some host runs more of the communicator's ranks than the CPUs of their bindings (CommTopology::oversubscribed): the
  // same on every rank.
  bool oversubscribed = false;
  int ranksPerCpu = 1;  // the most ranks a host runs per CPU (CommTopology::ranksPerCpu)
  // Host index of every rank (hosts numbered in order of their first rank), for the hierarchical
  // plans; empty when unknown, which they treat as one host.
  std::vector<int> hostOf;
};

}  // namespace strata
