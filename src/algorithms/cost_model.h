// The alpha-beta-gamma cost model: how long each algorithm should take for a collective of a given
// size on a communicator's shape (ranks, hosts, link costs). The selector picks the cheapest
// algorithm that is allowed; nothing here builds plans or measures anything.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "algorithms/collective.h"

namespace strata {

// One class of link: the fixed cost of a message (alpha, us) and the bandwidth one flow gets (GB/s).
// For the network class, `bandwidthGBs` is what one host's NIC carries in each direction; flows from
// several ranks of a host share it.
struct LinkCost {
  double latencyUs = 1.0;
  double bandwidthGBs = 5.0;
};

// The communicator's shape as the model sees it.
struct CostInputs {
  int nranks = 1;
  int nhosts = 1;
  int ranksPerHost = 1;     // ranks of every host when all hosts have the same number, else 0
  LinkCost intra;           // between ranks of one host (shared memory)
  LinkCost inter;           // between hosts (network)
  // The calibration's 1 MiB ring across hosts was its bytes on the link (a slow or shaped network): there a message
  // across hosts whose bytes outlast its latency pays only part of that latency (kLinkBoundLatencyShare in
  // cost_model.cc): rd's, rhd's and the two-level algorithms' steps between hosts (not the flat ring's).
  bool interLinkBound = false;
  // Some host runs more of the communicator's ranks than the CPUs of their bindings (CommTopology::oversubscribed):
  // each rank waits its turn on a core, which the timing of a class at its first call meets otherwise than later calls.
  bool oversubscribed = false;
  int ranksPerCpu = 1;  // the most ranks a host runs per CPU of their bindings, rounded up (CommTopology::ranksPerCpu)
  double reduceGBs = 10.0;  // local reduction rate, bytes of one input per second (x1e9)
  double copyGBs = 10.0;    // local copy rate
  uint64_t pipelineBytes = 512 << 10;  // piece size of pipelined algorithms (slots in flight)
  uint64_t fifoBytes = 1 << 20;        // one connection's FIFO: the direct exchange needs the buffer to fit
  bool peerMapped = false;             // ranks of a host can read each other's buffers (oneshot/twoshot)
  uint64_t windowBytes = 0;            // what one rank's window holds: larger buffers cannot go one/two-shot
  // ...unless the ranks reach each other's buffers by cross-memory attach (PlanGeometry::peerAccess): then one/two-shot
  // copy in place from PeerAccessMinBytes on, whatever the window holds.
  bool peerAccess = false;
  // The in-place algorithms' per-byte cost as a multiple of the ring's, measured by the calibration with the
  // allreduce's twoshot at `peerScaleBytes` (0: not measured; the model then prices their bytes at the link's rate and
  // the selector only times them). See PeerScaleAt.
  double peerScale = 0;
  uint64_t peerScaleBytes = 0;
  // Multiplies the per-byte terms of rd and rhd: their exchanges copy into and out of the FIFOs in
  // separate passes where the ring fuses the reduction into its send, and on a host with more ranks
  // than cores every pair exchanges at once. The calibration measures it against the ring.
  double recursiveScale = 1.0;
  // The scale above holds up to `recursiveScaleBytes` (the size it was measured at; 0: every size). From
  // `recursiveScaleLargeBytes` on (0: 8x the measured size), `recursiveScaleLarge` holds instead, and in between the
  // scale moves with log2 of the size: once the buffers leave the caches, rd's and rhd's separate copy and reduce
  // passes cost memory bandwidth that the calibration's in-cache run does not show.
  uint64_t recursiveScaleBytes = 0;
  double recursiveScaleLarge = 1.0;
  uint64_t recursiveScaleLargeBytes = 0;
  // Below `recursiveScaleBytes`, a second scale measured at `recursiveScaleSmallBytes` (0: not measured) holds at and
  // under that size, and in between the two the scale moves with log2 of the size. In cache, rd's one exchange of
  // the whole vector can cost less than the model's separate reduce pass says: on two ranks the ring took up to
  // 1.32x rd's time at 64-256 KiB while at 1 MiB rd was the slower (docs/PERFORMANCE.md, "Algorithm selection").
  uint64_t recursiveScaleSmallBytes = 0;
  double recursiveScaleSmall = 1.0;
  // From three ranks on, the scales above are rhd's; rd's allreduce's are they times this factor, its own 1 MiB scale
  // over rhd's where the calibration timed both (one host), else 1 (rd's reduce-scatter and allgather halve and
  // double as rhd's do: rhd's scale).
  double rdScaleFactor = 1.0;
  // Small allreduce times (one float per rank) the calibration measured, by algorithm name (absent: not
  // measured). Each stands for its algorithm's latency term in the allreduce model (rhd's, when absent, is
  // rd's times the ratio of their modelled latencies). Small allreduces are decided by what a message really costs: a
  // direct exchange sends p - 1 messages where rd sends log2(p), and over TCP each one costs system calls and a wake-up
  // beside its hop, which a hop latency does not show.
  std::map<std::string, double> smallUs;
};

// "ring 12.1 us, direct 9.8 us, rd 7.5 us" (CostInputs::smallUs), or "not measured".
std::string DescribeSmallUs(const CostInputs& in);

// The whole model on one line: shape, links, local rates, the rd/rhd scale and the small allreduce times (the
// TUNING log line and strata-info print it).
std::string DescribeCostInputs(const CostInputs& in);

// The in-place algorithms' scale for `kind` on a vector of `bytes` (CostInputs::peerScale, 1 when not measured). The
// allreduce's: the measured one up to the size it was measured at, kOutOfCachePeerScale (at least) from
// kOutOfCachePeerBytes, moving with log2 of the size in between. The allgather's: the measured one at every size. The
// reduce-scatter's: at least 1 at every size.
double PeerScaleAt(const CostInputs& in, CollKind kind, double bytes);
// Whether `algorithm` copies in place between the ranks' buffers for `kind` on `bytes` (cross-memory attach): the
// allreduce's twoshot, the allgather's and reduce-scatter's oneshot, from PeerAccessMinBytes or beyond the window.
bool CopiesInPlace(const CostInputs& in, const std::string& algorithm, CollKind kind, double bytes);

// rd's and rhd's per-byte scale for a vector of `bytes` (see CostInputs::recursiveScale). On two ranks rhd's halving
// and doubling steps are the ring's two steps, costed as the ring's plus a copy pass (EstimateUs): the scale is rd's.
double RecursiveScaleAt(const CostInputs& in, double bytes);

// Estimated time in microseconds of `algorithm` (a name of the algorithm table: ring, tree, rd, rhd,
// oneshot, twoshot, hier, hier_leader, pairwise, chain, direct) running `kind` on `bytes`, the size of
// the whole vector (allreduce/broadcast/reduce: the buffer; allgather: the output; reduce-scatter:
// the input; alltoall: everything one rank sends). Returns a negative value when the algorithm does
// not serve this collective or shape (then it must not be chosen), and for twoshot's allgather and reduce-scatter,
// which run oneshot's plan (they can still be forced).
double EstimateUs(const std::string& algorithm, CollKind kind, uint64_t bytes, const CostInputs& in);

// The cheapest of `candidates` for (kind, bytes), or "" when none applies. Ties go to the earlier
// candidate, so the order of the list is the order of preference.
struct CostChoice {
  std::string algorithm;
  double estimateUs = 0;
};
CostChoice ChooseCheapest(const std::vector<std::string>& candidates, CollKind kind, uint64_t bytes,
                          const CostInputs& in);

}  // namespace strata
