#include "topology/local_topology.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>

#include "core/config.h"
#include "core/log.h"
#include "topology/cpu_list.h"
#include "topology/detect.h"
#include "topology/topology_json.h"

namespace strata {

namespace {

struct Cached {
  std::string file, hostId;
  LocalTopology topo;
  bool valid = false;
};
std::mutex g_mu;
Cached g_cached;

bool ReadText(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f || !std::getline(f, *out)) return false;
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ')) out->pop_back();
  return true;
}

// The cgroup cpuset this process lives in, when the kernel says (cgroup v2, then v1).
std::vector<int> CgroupCpus() {
  std::ifstream f("/proc/self/cgroup");
  std::vector<int> cpus;
  std::string err;
  for (std::string line; std::getline(f, line);) {
    std::string text;
    if (line.compare(0, 3, "0::") == 0) {
      if (ReadText("/sys/fs/cgroup" + line.substr(3) + "/cpuset.cpus.effective", &text) &&
          ParseCpuList(text, &cpus, &err) && !cpus.empty())
        return cpus;
    } else {
      const size_t a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",";
      if (controllers.find(",cpuset,") == std::string::npos) continue;
      if (ReadText("/sys/fs/cgroup/cpuset" + line.substr(b + 1) + "/cpuset.effective_cpus", &text) &&
          ParseCpuList(text, &cpus, &err) && !cpus.empty())
        return cpus;
    }
  }
  return {};
}

std::vector<int> Intersect(const std::vector<int>& a, const std::vector<int>& b) {
  std::vector<int> out;
  for (int c : a)
    if (std::binary_search(b.begin(), b.end(), c)) out.push_back(c);
  return out;
}

}  // namespace

Status GetLocalTopology(const std::string& hostId, LocalTopology* out) {
  const std::string file = ConfigString("STRATA_TOPO_FILE");
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_cached.valid && g_cached.file == file && g_cached.hostId == hostId) {
    *out = g_cached.topo;
    return Status::Ok();
  }
  LocalTopology t;
  auto graph = std::make_shared<TopologyGraph>();
  if (!file.empty()) {
    std::string err;
    STRATA_REQUIRE(LoadTopologyFile(file, graph.get(), &err), strataInvalidArgument, "STRATA_TOPO_FILE: %s",
                   err.c_str());
    t.fromFile = true;
    t.host = graph->hostIndex(hostId);
    if (t.host >= 0) {
      t.note = "host \"" + hostId + "\" of " + file;
    } else if (graph->hosts.size() == 1) {
      t.note = file + "'s only host, \"" + graph->hosts[0].id + "\" (this process's host id is \"" + hostId + "\")";
      t.host = 0;
    } else {
      t.note = "no host of " + file + " has id \"" + hostId + "\": using the first, \"" + graph->hosts[0].id + "\"";
      t.host = 0;
    }
  } else {
    std::string source;
    graph->hosts.push_back(DetectHost(hostId, &source));
    graph->source = source;
    t.note = "detected with " + source;
  }
  t.graph = std::move(graph);
  STRATA_LOG(INFO, INIT, "topology: %s: %s", t.note.c_str(), SummarizeHost(t.myHost()).c_str());
  g_cached.file = file;
  g_cached.hostId = hostId;
  g_cached.topo = t;
  g_cached.valid = true;
  *out = std::move(t);
  return Status::Ok();
}

std::vector<int> CurrentCpuBinding() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::vector<int> AvailableCpus() {
  std::string text, err;
  std::vector<int> online;
  if (!ReadText("/sys/devices/system/cpu/online", &text) || !ParseCpuList(text, &online, &err) || online.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (long c = 0; c < n && c <= kMaxCpuIndex; ++c) online.push_back(static_cast<int>(c));
  }
  const std::vector<int> cgroup = CgroupCpus();
  if (cgroup.empty()) return online;
  const std::vector<int> both = Intersect(online, cgroup);
  return both.empty() ? online : both;
}

Status BindProcessToCpus(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  STRATA_REQUIRE(CPU_COUNT(&set) > 0, strataInvalidArgument, "no CPU to bind to");
  // sched_setaffinity binds one thread: every thread of the process, the caller included.
  DIR* d = opendir("/proc/self/task");
  if (!d) {
    if (sched_setaffinity(0, sizeof(set), &set) != 0) return MakeSysError(errno, "sched_setaffinity");
    return Status::Ok();
  }
  int firstErr = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    const pid_t tid = static_cast<pid_t>(atoi(e->d_name));
    // A thread may exit while we walk the list (ESRCH): nothing to bind then.
    if (sched_setaffinity(tid, sizeof(set), &set) != 0 && errno != ESRCH && !firstErr) firstErr = errno;
  }
  closedir(d);
  if (sched_setaffinity(0, sizeof(set), &set) != 0) return MakeSysError(errno, "sched_setaffinity");
  if (firstErr) return MakeSysError(firstErr, "sched_setaffinity of a thread of this process");
  return Status::Ok();
}

int LauncherLocalRank() {
  const int fromStrata = static_cast<int>(ConfigInt("STRATA_LOCAL_RANK"));
  if (fromStrata >= 0) return fromStrata;
  for (const char* name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    const std::string v = LauncherEnv(name);
    char* end = nullptr;
    const long x = strtol(v.c_str(), &end, 10);
    if (!v.empty() && *end == '\0' && x >= 0 && x < (1 << 20)) return static_cast<int>(x);
  }
  return -1;
}

Status BindToNumaNode(const TopoHost& host, int localRank, bool* bound, std::string* what) {
  *bound = false;
  what->clear();
  const std::vector<int> current = CurrentCpuBinding();
  const std::vector<int> available = AvailableCpus();
  if (!CpuListContains(current, available)) return Status::Ok();  // someone bound it already
  std::vector<const TopoNuma*> nodes;
  for (const TopoNuma& n : host.numaNodes)
    if (!n.cores.empty()) nodes.push_back(&n);
  if (nodes.empty()) return Status::Ok();
  const TopoNuma* target = nullptr;
  std::string why;
  if (localRank >= 0) {
    target = nodes[localRank % nodes.size()];
    why = "local rank " + std::to_string(localRank) + " of the launcher, round robin over " +
          std::to_string(nodes.size()) + " NUMA node" + (nodes.size() == 1 ? "" : "s");
  } else {
    const int cpu = sched_getcpu();
    for (const TopoNuma* n : nodes) {
      const std::vector<int> cpus = n->cpus();
      if (std::binary_search(cpus.begin(), cpus.end(), cpu)) target = n;
    }
    if (!target) target = nodes[0];
    why = "the node of CPU " + std::to_string(cpu) + ", where it was running";
  }
  const std::vector<int> cpus = Intersect(target->cpus(), available);
  if (cpus.empty()) {
    *what = "STRATA_BIND: NUMA node " + std::to_string(target->osIndex) + " (" + why + ") has none of the CPUs " +
            FormatCpuList(available) + " this process may use; left unbound";
    return Status::Ok();
  }
  STRATA_CHECK(BindProcessToCpus(cpus));
  *bound = true;
  *what = "STRATA_BIND: bound this process (CPUs " + FormatCpuList(current) + ") to NUMA node " +
          std::to_string(target->osIndex) + ", CPUs " + FormatCpuList(cpus) + " (" + why + ")";
  return Status::Ok();
}

std::string InterfaceOfAddress(uint32_t ip) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string name;
  for (ifaddrs* a = list; a; a = a->ifa_next) {
    if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !a->ifa_name) continue;
    if (reinterpret_cast<const sockaddr_in*>(a->ifa_addr)->sin_addr.s_addr == ip) {
      name = a->ifa_name;
      break;
    }
  }
  freeifaddrs(list);
  return name;
}

RankPlace DescribeThisProcess(const LocalTopology& topo, const std::string& ifname) {
  const TopoHost& host = topo.myHost();
  RankPlace p;
  p.hostId = host.id;
  p.cpus = CurrentCpuBinding();
  p.numa = host.numaOfCpus(p.cpus);
  p.numaCount = static_cast<int>(host.numaNodes.size());
  p.nic = ifname.substr(0, kWireNicChars - 1);
  const int named = ifname.empty() ? -1 : host.nicIndex(ifname);
  if (named >= 0) {
    p.nicSpeedMbps = host.nics[named].speedMbps;
  } else if (topo.fromFile && host.nearestNic(p.numa) >= 0) {
    // The file describes a machine we may not be on: its NIC stands for ours.
    const TopoNic& n = host.nics[host.nearestNic(p.numa)];
    p.nicSpeedMbps = n.speedMbps;
    p.nic = n.name.substr(0, kWireNicChars - 1);
  } else if (!ifname.empty()) {
    p.nicSpeedMbps = NicSpeedMbps("/sys", ifname);
  }
  return p;
}

}  // namespace strata
