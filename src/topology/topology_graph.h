// The topology graph: hosts -> NUMA nodes -> cores, the GPUs and NICs of each host, the NVLinks
// between GPUs, and the cost of each class of link. Detection (detect.h) and topology files
// (topology_json.h) both produce one; the communicator's view (comm_topology.h) and the selector
// read it. Plain data: no hwloc types, nothing tied to the machine that built it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata {

// Bounds every graph obeys (topology files are checked against them; detection truncates to them).
constexpr int kMaxTopoHosts = 4096;
constexpr int kMaxNumaNodesPerHost = 1024;
constexpr int kMaxGpusPerHost = 32;
constexpr int kMaxNicsPerHost = 64;
constexpr size_t kMaxHostIdChars = 127;  // PeerInfo::hostId holds 128 bytes
constexpr size_t kMaxDeviceNameChars = 63;

// The kinds of hop a byte can take between two places. Order is the JSON and wire order.
enum class LinkClass : int {
  SameNuma = 0,   // two places in one NUMA node's memory (shared-memory copy)
  CrossNuma = 1,  // across the sockets' interconnect (UPI, Infinity Fabric)
  Pcie = 2,       // through a PCIe device (GPU or NIC) and the host bridge
  NvLink = 3,     // GPU to GPU over NVLink; the bandwidth is per link and scales with the link count
  Network = 4,    // between hosts, through a NIC
};
constexpr int kLinkClassCount = 5;
const char* LinkClassName(LinkClass c);  // "same_numa", "cross_numa", "pcie", "nvlink", "network"
bool ParseLinkClassName(const std::string& name, LinkClass* out);

struct LinkParams {
  double latencyUs = 0;     // fixed cost of one message
  double bandwidthGBs = 0;  // one flow, one direction, 1e9 bytes per second
  bool operator==(const LinkParams& o) const { return latencyUs == o.latencyUs && bandwidthGBs == o.bandwidthGBs; }
};

// The cost of each link class. Defaults() are order-of-magnitude figures (docs/TOPOLOGY.md says
// where each comes from); a topology file overrides any of them.
struct LinkTable {
  LinkParams params[kLinkClassCount];
  static LinkTable Defaults();
  const LinkParams& operator[](LinkClass c) const { return params[static_cast<int>(c)]; }
  LinkParams& operator[](LinkClass c) { return params[static_cast<int>(c)]; }
  bool operator==(const LinkTable& o) const;
};

// What the path between two places costs: the class of link that defines it, the sum of its
// hops' latencies and the bandwidth of its narrowest hop.
struct LinkInfo {
  LinkClass cls = LinkClass::SameNuma;
  double latencyUs = 0;
  double bandwidthGBs = 0;
};

struct TopoCore {
  std::vector<int> cpus;  // its logical CPUs (hardware threads), sorted
};

struct TopoNuma {
  int osIndex = 0;              // the kernel's node number (/sys/devices/system/node/nodeN)
  int package = -1;             // the package (socket) holding its cores; -1 when unknown or several
  uint64_t memoryMb = 0;        // 0 when unknown
  std::vector<TopoCore> cores;  // ordered by first CPU; empty for a memory-only node
  std::vector<int> cpus() const;
};

struct TopoGpu {
  std::string name;                     // "gpu0", ...: PCI bus order on detection
  std::string pci;                      // "0000:07:00.0"
  int numa = -1;                        // NUMA node os index; -1 unknown
  uint16_t vendorId = 0, deviceId = 0;  // PCI ids; 0 unknown
  std::string model;                    // free text, may be empty
};

struct TopoNic {
  std::string name;  // the network interface ("eth0", "ib0") or, without one, the RDMA device
  std::string pci;   // "0000:0c:00.0"; empty for a NIC with no PCI function (not detected)
  int numa = -1;
  uint32_t speedMbps = 0;  // link speed; 0 unknown (virtio, veth, a link that is down)
  std::string type;        // "ethernet", "infiniband" or "" (unknown)
  std::string rdma;        // RDMA device of the same function ("mlx5_0"), "" none
};

struct TopoNvLink {
  int gpuA = 0, gpuB = 0;  // indices into TopoHost::gpus, gpuA < gpuB
  int count = 1;           // NVLink links between the two
};

struct TopoHost {
  std::string id;                   // the host id ranks group by (HostId(): STRATA_HOSTID or hostname:boot-id)
  std::vector<TopoNuma> numaNodes;  // ordered by os index
  std::vector<TopoGpu> gpus;
  std::vector<TopoNic> nics;
  std::vector<TopoNvLink> nvlinks;  // ordered by (gpuA, gpuB)

  int packageCount() const;  // distinct known packages (at least 1 when there are cores)
  int coreCount() const;
  int cpuCount() const;
  std::vector<int> cpus() const;
  int numaIndex(int osIndex) const;  // index into numaNodes, -1 if none has that os index
  // The os index of the one NUMA node whose cores hold every CPU of `cpus`; -1 when the CPUs span
  // several nodes, name CPUs this host does not have, or are empty.
  int numaOfCpus(const std::vector<int>& cpus) const;
  int nvlinkCount(int gpuA, int gpuB) const;  // links between two GPU indices, 0 if none
  int gpuIndex(const std::string& name) const;
  int nicIndex(const std::string& name) const;
  // The NIC a rank on NUMA node `numa` would use: the fastest on that node, else the fastest on the
  // host (unknown speed counts as slowest), else -1.
  int nearestNic(int numa) const;
};

struct TopologyGraph {
  std::string source;       // how it was made: "hwloc 2.9.0", "sysfs", or what a file says; informational
  std::string description;  // free text from a file; empty for a detected topology
  LinkTable links = LinkTable::Defaults();
  std::vector<TopoHost> hosts;

  int hostIndex(const std::string& id) const;  // -1 if no host has that id
};

// One end of a path inside a graph: host memory on a NUMA node, a GPU or a NIC of one host.
struct TopoEndpoint {
  enum class Kind { Numa, Gpu, Nic };
  int host = 0;
  Kind kind = Kind::Numa;
  int index = 0;  // into numaNodes, gpus or nics
};

// Finds "NAME" (on the first host) or "HOST/NAME", where NAME is numaN (N the os index), a GPU's
// or a NIC's name. False with `err` set when there is no such place.
bool FindEndpoint(const TopologyGraph& graph, const std::string& spec, TopoEndpoint* out, std::string* err);

// Where a path starts or ends, as the link rules see it (docs/TOPOLOGY.md, "Link rules").
struct LinkEnd {
  int numa = -1;              // NUMA node os index; -1 unknown or several
  bool device = false;        // a GPU or NIC (PCIe) rather than host memory
  int gpu = -1;               // GPU index on its host, for NVLink
  uint32_t nicSpeedMbps = 0;  // the NIC it reaches other hosts through; 0 unknown
};
// The rules, in one place for graph endpoints and for ranks. `nvlinks`: links between the two
// ends' GPUs (0 when not both GPUs). `singleNuma`: their host has one NUMA node.
LinkInfo ComposeLink(const LinkTable& table, bool sameHost, bool samePlace, const LinkEnd& a, const LinkEnd& b,
                     int nvlinks, bool singleNuma);

LinkInfo LinkBetween(const TopologyGraph& graph, const TopoEndpoint& a, const TopoEndpoint& b);

// Human-readable summaries (strata-info, logs).
std::string DescribeHost(const TopoHost& host);         // several lines, each starting with "  "
std::string SummarizeHost(const TopoHost& host);        // one line: packages, NUMA nodes, cores, GPUs, NICs
std::string DescribeLinkTable(const LinkTable& table);  // one line per class

}  // namespace strata
