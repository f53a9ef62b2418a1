// The communicator's view of the topology: where each rank runs (host, NUMA node, CPU binding,
// GPU, NIC) and what the link between any two ranks costs. Built from what the ranks exchange at
// init, so every rank holds the same view and the selector makes the same choice on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "topology/topology_graph.h"

namespace strata {

// Where one rank runs.
struct RankPlace {
  std::string hostId;            // ranks with equal ids share a host
  int numa = -1;                 // NUMA node (os index) holding all its CPUs; -1 unknown or several
  int numaCount = 1;             // NUMA nodes of its host
  int gpu = -1;                  // GPU index on its host; -1: the rank works on host memory
  int gpuNuma = -1;              // that GPU's NUMA node
  std::vector<uint8_t> nvlinks;  // NVLinks from its GPU to each GPU index of its host (may be empty)
  std::vector<int> cpus;         // its CPU binding
  std::string nic;               // the interface its TCP connections use ("" unknown)
  uint32_t nicSpeedMbps = 0;     // that interface's speed, 0 unknown
  bool boundByStrata = false;    // STRATA_BIND bound it at init
};

// A RankPlace as it travels inside PeerInfo: fixed size, trivially copyable. The sender's link
// table travels too; every rank uses rank 0's (as it uses rank 0's FIFO geometry).
constexpr int kWireCpuWords = 16;  // CPUs 0-1023; a binding beyond is cut there
constexpr int kWireNicChars = 16;  // IFNAMSIZ
struct RankPlaceWire {
  int32_t numa;
  int32_t numaCount;
  int32_t gpu;
  int32_t gpuNuma;
  uint32_t nicSpeedMbps;
  uint32_t flags;  // bit 0: bound by STRATA_BIND
  char nic[kWireNicChars];
  uint8_t nvlinks[kMaxGpusPerHost];
  uint64_t cpuMask[kWireCpuWords];
  double latencyUs[kLinkClassCount];
  double bandwidthGBs[kLinkClassCount];
};
void EncodeRankPlace(const RankPlace& place, const LinkTable& links, RankPlaceWire* wire);
// Decodes a peer's record, clamping whatever is out of range (a NUL-less name, a negative count, a
// non-finite or non-positive cost) so that nothing downstream has to trust it.
void DecodeRankPlace(const RankPlaceWire& wire, const std::string& hostId, RankPlace* place, LinkTable* links);

class CommTopology {
 public:
  CommTopology() = default;
  // `ranks` indexed by rank; `links` the table every rank uses.
  CommTopology(std::vector<RankPlace> ranks, const LinkTable& links);

  // A communicator laid out on a graph without running one, for the selector's tests and
  // strata-info: `ranksPerHost` ranks on every host of `graph`, host by host (rank r on host
  // r / ranksPerHost), on GPU i (the local index) when `onGpus` and the host has it, else spread
  // round robin over the NUMA nodes that have cores; each uses its NUMA node's nearest NIC.
  static CommTopology OnGraph(const TopologyGraph& graph, int ranksPerHost, bool onGpus);

  int nranks() const { return static_cast<int>(ranks_.size()); }
  int nhosts() const { return static_cast<int>(hosts_.size()); }
  // Hosts are numbered 0.. in the order of their first rank.
  int hostOf(int rank) const { return hostOf_[rank]; }
  const std::string& hostId(int host) const { return ranks_[hosts_[host].front()].hostId; }
  const std::vector<int>& ranksOfHost(int host) const { return hosts_[host]; }  // ascending
  int localRank(int rank) const { return localRank_[rank]; }                    // index among its host's ranks
  // The same number of ranks on every host: that number; else 0.
  int ranksPerHost() const { return ranksPerHost_; }
  int numaOf(int rank) const { return ranks_[rank].numa; }
  bool sameHost(int a, int b) const { return hostOf_[a] == hostOf_[b]; }
  // Same host and known to share a NUMA node (always true on a one-node host).
  bool sameNuma(int a, int b) const;
  const RankPlace& place(int rank) const { return ranks_[rank]; }
  const LinkTable& links() const { return links_; }

  // The link between two ranks (docs/TOPOLOGY.md, "Link rules"): network between hosts; NVLink
  // between GPUs joined by it; PCIe when a GPU is involved otherwise; same or cross NUMA between
  // host-memory ranks. A rank with itself: same_numa.
  LinkInfo linkBetween(int a, int b) const;

  // Groups for hierarchical algorithms: ranks by host (hosts in order), and ranks by (host, NUMA
  // node), ranks whose node is unknown forming one group per host.
  std::vector<std::vector<int>> hostGroups() const { return hosts_; }
  std::vector<std::vector<int>> numaGroups() const;

  // For the cost model: the slowest link (lowest bandwidth, then highest latency) between two ranks
  // of one host, and between two ranks of different hosts. `*any` false when there is no such pair
  // (the result is then the class default: same_numa, network).
  LinkInfo slowestIntraHostLink(bool* any = nullptr) const;
  LinkInfo slowestInterHostLink(bool* any = nullptr) const;

  // Some host runs more ranks than there are CPUs in its ranks' bindings taken together: ranks wait their turn on a
  // core. A rank whose binding is unknown (empty) counts no CPU.
  bool oversubscribed() const;
  // The most ranks one host runs per CPU of their bindings taken together, rounded up (1 where no host is
  // oversubscribed; a host whose ranks' bindings are all unknown counts its ranks).
  int ranksPerCpu() const;

  // Several lines for strata-info and the INFO log.
  std::string describe() const;

 private:
  LinkEnd endOf(int rank) const;
  // Per host: its ranks and the CPUs of their bindings taken together.
  std::vector<std::pair<int, int>> ranksAndCpus() const;

  std::vector<RankPlace> ranks_;
  LinkTable links_ = LinkTable::Defaults();
  std::vector<std::vector<int>> hosts_;
  std::vector<int> hostOf_, localRank_;
  int ranksPerHost_ = 0;
};

}  // namespace strata
