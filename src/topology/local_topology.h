// This process's topology: the graph it works with (STRATA_TOPO_FILE, else its host detected once
// per process), which host of that graph it is, its CPU binding, STRATA_BIND, and the RankPlace it
// tells its peers at init.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "topology/comm_topology.h"
#include "topology/topology_graph.h"

namespace strata {

struct LocalTopology {
  std::shared_ptr<const TopologyGraph> graph;
  int host = 0;           // index into graph->hosts: this process's host
  bool fromFile = false;  // STRATA_TOPO_FILE
  std::string note;       // how the host was chosen, for the log
  const TopoHost& myHost() const { return graph->hosts[host]; }
};

// The graph: STRATA_TOPO_FILE when set (an unreadable or malformed file is strataInvalidArgument,
// the message "FILE:LINE: what"), else this machine detected as host `hostId`. Computed once per
// process for each (file, hostId) and shared afterwards. In a file, this process is the host whose
// id is `hostId`, else the only host, else the first (said in `note`).
Status GetLocalTopology(const std::string& hostId, LocalTopology* out);

// The CPUs the calling thread may run on.
std::vector<int> CurrentCpuBinding();
// The CPUs this process could be given: online CPUs, within its cgroup's cpuset when readable.
std::vector<int> AvailableCpus();
// Binds every thread of this process to `cpus`.
Status BindProcessToCpus(const std::vector<int>& cpus);

// STRATA_BIND=1: when the process may run on every available CPU (no launcher, taskset or numactl
// bound it), binds all its threads to the cores of one NUMA node of `host`: node `localRank` mod the
// nodes with cores when localRank >= 0, else the node of the CPU it runs on now. `*bound` says
// whether it did; `*what` gets a line for the log ("" when the process was bound already).
Status BindToNumaNode(const TopoHost& host, int localRank, bool* bound, std::string* what);

// The local rank a launcher gave this process (STRATA_LOCAL_RANK, LOCAL_RANK,
// OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID), -1 when none did.
int LauncherLocalRank();

// The network interface holding IPv4 address `ip` (network order), "" when none does.
std::string InterfaceOfAddress(uint32_t ip);

// This process as a rank: NUMA node from its binding; NIC `ifname` with its speed from the graph
// (a file's NIC of that name, or a file host's NIC nearest to the rank) or from sysfs.
RankPlace DescribeThisProcess(const LocalTopology& topo, const std::string& ifname);

}  // namespace strata
