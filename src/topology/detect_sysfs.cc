// Detection from /sys alone (the fallback when the build has no hwloc), and the sysfs facts both
// detectors share: NIC speed, type and RDMA device.
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "topology/cpu_list.h"
#include "topology/detect.h"

namespace strata {

namespace {

bool ReadLine(const std::string& path, std::string* out) {
  std::ifstream f(path);
  if (!f || !std::getline(f, *out)) return false;
  while (!out->empty() && (out->back() == '\n' || out->back() == ' ' || out->back() == '\r')) out->pop_back();
  return true;
}

bool ReadLong(const std::string& path, long* out) {
  std::string s;
  if (!ReadLine(path, &s) || s.empty()) return false;
  char* end = nullptr;
  const long v = strtol(s.c_str(), &end, 0);
  if (end == s.c_str() || *end != '\0') return false;
  *out = v;
  return true;
}

std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> out;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.push_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool IsPciAddress(const std::string& s) {
  static const char kShape[] = "xxxx:xx:xx.x";
  if (s.size() != sizeof(kShape) - 1) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (kShape[i] == 'x' ? !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) : c != kShape[i]) return false;
  }
  return true;
}

// The PCI function a class device (/sys/class/net/eth0) belongs to: the deepest PCI address in the
// resolved path of its "device" link. "" for virtual devices.
std::string PciFunctionOf(const std::string& classDir) {
  char buf[PATH_MAX];
  if (!realpath((classDir + "/device").c_str(), buf)) return "";
  std::string path = buf, found;
  size_t start = 0;
  while (start < path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    const std::string part = path.substr(start, end - start);
    if (IsPciAddress(part)) found = part;
    start = end + 1;
  }
  return found;
}

int PciNuma(const std::string& sysRoot, const std::string& pci) {
  long numa = -1;
  if (!ReadLong(sysRoot + "/bus/pci/devices/" + pci + "/numa_node", &numa) || numa < 0 || numa > kMaxCpuIndex)
    return -1;
  return static_cast<int>(numa);
}

// "100 Gb/sec (4X EDR)" -> 100000.
uint32_t RdmaRateMbps(const std::string& sysRoot, const std::string& rdma) {
  for (const std::string& port : ListDir(sysRoot + "/class/infiniband/" + rdma + "/ports")) {
    std::string rate;
    if (!ReadLine(sysRoot + "/class/infiniband/" + rdma + "/ports/" + port + "/rate", &rate)) continue;
    char* end = nullptr;
    const double gbits = strtod(rate.c_str(), &end);
    if (end != rate.c_str() && gbits > 0 && gbits < 1e4) return static_cast<uint32_t>(gbits * 1000 + 0.5);
  }
  return 0;
}

// What the kernel says about the cores of the online CPUs: (package, core id) per CPU.
struct CpuFacts {
  int package = 0;
  int core = 0;
};

}  // namespace

bool IsComputeGpu(uint16_t classId, uint16_t vendorId) {
  const bool display = classId == 0x0300 || classId == 0x0302 || classId == 0x0380;
  return display && (vendorId == 0x10de || vendorId == 0x1002);
}

uint32_t NicSpeedMbps(const std::string& sysRoot, const std::string& ifname) {
  long speed = 0;
  // Reading "speed" of a virtual or down interface fails with EINVAL or says -1: unknown.
  if (ReadLong(sysRoot + "/class/net/" + ifname + "/speed", &speed) && speed > 0 && speed <= 10000000)
    return static_cast<uint32_t>(speed);
  const std::string pci = PciFunctionOf(sysRoot + "/class/net/" + ifname);
  if (pci.empty()) return 0;
  for (const std::string& rdma : ListDir(sysRoot + "/class/infiniband"))
    if (PciFunctionOf(sysRoot + "/class/infiniband/" + rdma) == pci) return RdmaRateMbps(sysRoot, rdma);
  return 0;
}

void CompleteNicFromSysfs(const std::string& sysRoot, TopoNic* nic) {
  const std::string netDir = sysRoot + "/class/net/" + nic->name;
  long type = 0;
  if (ReadLong(netDir + "/type", &type)) {
    // ARPHRD_ETHER and ARPHRD_INFINIBAND
    if (type == 1)
      nic->type = "ethernet";
    else if (type == 32)
      nic->type = "infiniband";
    nic->speedMbps = NicSpeedMbps(sysRoot, nic->name);
  } else if (!nic->rdma.empty()) {
    // An RDMA device with no network interface: its link layer and port rate.
    std::string layer;
    for (const std::string& port : ListDir(sysRoot + "/class/infiniband/" + nic->rdma + "/ports"))
      if (ReadLine(sysRoot + "/class/infiniband/" + nic->rdma + "/ports/" + port + "/link_layer", &layer)) break;
    nic->type = layer == "InfiniBand" ? "infiniband" : layer == "Ethernet" ? "ethernet" : "";
    nic->speedMbps = RdmaRateMbps(sysRoot, nic->rdma);
  }
  if (nic->rdma.empty() && !nic->pci.empty()) {
    for (const std::string& rdma : ListDir(sysRoot + "/class/infiniband"))
      if (PciFunctionOf(sysRoot + "/class/infiniband/" + rdma) == nic->pci) {
        nic->rdma = rdma;
        break;
      }
  }
}

void FinishDetectedHost(TopoHost* host) {
  if (host->numaNodes.size() == 1) {
    const int only = host->numaNodes[0].osIndex;
    for (TopoGpu& g : host->gpus)
      if (g.numa < 0) g.numa = only;
    for (TopoNic& n : host->nics)
      if (n.numa < 0) n.numa = only;
  }
  for (TopoGpu& g : host->gpus)
    if (host->numaIndex(g.numa) < 0) g.numa = -1;
  for (TopoNic& n : host->nics)
    if (host->numaIndex(n.numa) < 0) n.numa = -1;
  std::sort(host->gpus.begin(), host->gpus.end(), [](const TopoGpu& a, const TopoGpu& b) { return a.pci < b.pci; });
  if (host->gpus.size() > static_cast<size_t>(kMaxGpusPerHost)) host->gpus.resize(kMaxGpusPerHost);
  for (size_t i = 0; i < host->gpus.size(); ++i) host->gpus[i].name = "gpu" + std::to_string(i);
  std::sort(host->nics.begin(), host->nics.end(),
            [](const TopoNic& a, const TopoNic& b) { return a.pci != b.pci ? a.pci < b.pci : a.name < b.name; });
  if (host->nics.size() > static_cast<size_t>(kMaxNicsPerHost)) host->nics.resize(kMaxNicsPerHost);
  for (TopoNuma& n : host->numaNodes)
    std::sort(n.cores.begin(), n.cores.end(),
              [](const TopoCore& a, const TopoCore& b) { return a.cpus.front() < b.cpus.front(); });
  std::sort(host->numaNodes.begin(), host->numaNodes.end(),
            [](const TopoNuma& a, const TopoNuma& b) { return a.osIndex < b.osIndex; });
}

bool DetectHostFromSysfs(const std::string& sysRoot, TopoHost* out, std::string* err) {
  TopoHost host;
  const std::string cpuDir = sysRoot + "/devices/system/cpu";
  std::string text;
  std::vector<int> online;
  if (!ReadLine(cpuDir + "/online", &text) || !ParseCpuList(text, &online, err) || online.empty()) {
    *err = "cannot read the online CPUs from " + cpuDir + "/online";
    return false;
  }
  std::map<int, CpuFacts> facts;
  for (int cpu : online) {
    const std::string topo = cpuDir + "/cpu" + std::to_string(cpu) + "/topology/";
    long pkg = 0, core = cpu;
    ReadLong(topo + "physical_package_id", &pkg);
    if (!ReadLong(topo + "core_id", &core)) core = cpu;
    facts[cpu] = CpuFacts{static_cast<int>(pkg < 0 ? 0 : pkg), static_cast<int>(core)};
  }

  // NUMA nodes; a kernel without NUMA support has no node directory: one node with every CPU.
  const std::string nodeDir = sysRoot + "/devices/system/node";
  std::vector<std::pair<int, std::vector<int>>> nodes;
  for (const std::string& name : ListDir(nodeDir)) {
    if (name.size() < 5 || name.compare(0, 4, "node") != 0 ||
        name.find_first_not_of("0123456789", 4) != std::string::npos)
      continue;
    std::vector<int> cpus;
    std::string list, perr;
    if (ReadLine(nodeDir + "/" + name + "/cpulist", &list)) ParseCpuList(list, &cpus, &perr);
    nodes.emplace_back(atoi(name.c_str() + 4), cpus);
  }
  if (nodes.empty()) nodes.emplace_back(0, online);
  std::sort(nodes.begin(), nodes.end());
  std::set<int> placed;
  for (const auto& node : nodes) {
    TopoNuma n;
    n.osIndex = node.first;
    std::ifstream meminfo(nodeDir + "/node" + std::to_string(node.first) + "/meminfo");
    for (std::string line; std::getline(meminfo, line);) {
      const size_t at = line.find("MemTotal:");
      if (at != std::string::npos) n.memoryMb = strtoull(line.c_str() + at + 9, nullptr, 10) >> 10;
    }
    // Group the node's online CPUs into cores by (package, core id).
    std::map<std::pair<int, int>, std::vector<int>> cores;
    for (int cpu : node.second) {
      auto it = facts.find(cpu);
      if (it == facts.end() || !placed.insert(cpu).second) continue;
      cores[{it->second.package, it->second.core}].push_back(cpu);
    }
    std::set<int> packages;
    for (auto& c : cores) {
      packages.insert(c.first.first);
      n.cores.push_back(TopoCore{c.second});
    }
    n.package = packages.size() == 1 ? *packages.begin() : -1;
    host.numaNodes.push_back(std::move(n));
  }
  if (host.numaNodes.size() > static_cast<size_t>(kMaxNumaNodesPerHost)) host.numaNodes.resize(kMaxNumaNodesPerHost);
  if (host.numaNodes.size() == 1 && host.numaNodes[0].memoryMb == 0) {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
    if (pages > 0 && pageSize > 0) host.numaNodes[0].memoryMb = (static_cast<uint64_t>(pages) * pageSize) >> 20;
  }

  // GPUs: PCI functions by class and vendor.
  const std::string pciDir = sysRoot + "/bus/pci/devices";
  for (const std::string& pci : ListDir(pciDir)) {
    long cls = 0, vendor = 0, device = 0;
    if (!IsPciAddress(pci) || !ReadLong(pciDir + "/" + pci + "/class", &cls) ||
        !ReadLong(pciDir + "/" + pci + "/vendor", &vendor))
      continue;
    ReadLong(pciDir + "/" + pci + "/device", &device);
    const uint16_t classId = static_cast<uint16_t>(cls >> 8);
    if (!IsComputeGpu(classId, static_cast<uint16_t>(vendor))) continue;
    TopoGpu g;
    g.pci = pci;
    g.numa = PciNuma(sysRoot, pci);
    g.vendorId = static_cast<uint16_t>(vendor);
    g.deviceId = static_cast<uint16_t>(device);
    host.gpus.push_back(g);
  }

  // NICs: network interfaces backed by a PCI function, then RDMA devices with no interface.
  std::set<std::string> rdmaSeen;
  for (const std::string& ifname : ListDir(sysRoot + "/class/net")) {
    const std::string pci = PciFunctionOf(sysRoot + "/class/net/" + ifname);
    if (pci.empty() || ifname.size() > kMaxDeviceNameChars) continue;
    TopoNic n;
    n.name = ifname;
    n.pci = pci;
    n.numa = PciNuma(sysRoot, pci);
    CompleteNicFromSysfs(sysRoot, &n);
    if (!n.rdma.empty()) rdmaSeen.insert(n.rdma);
    host.nics.push_back(n);
  }
  for (const std::string& rdma : ListDir(sysRoot + "/class/infiniband")) {
    const std::string pci = PciFunctionOf(sysRoot + "/class/infiniband/" + rdma);
    if (pci.empty() || rdmaSeen.count(rdma) || rdma.size() > kMaxDeviceNameChars) continue;
    TopoNic n;
    n.name = rdma;
    n.rdma = rdma;
    n.pci = pci;
    n.numa = PciNuma(sysRoot, pci);
    CompleteNicFromSysfs(sysRoot, &n);
    host.nics.push_back(n);
  }
  FinishDetectedHost(&host);
  *out = std::move(host);
  return true;
}

TopoHost DetectHost(const std::string& hostId, std::string* source) {
  TopoHost host;
  std::string err, version;
  if (DetectHostWithHwloc(&host, &version, &err)) {
    *source = "hwloc " + version;
  } else if (DetectHostFromSysfs("/sys", &host, &err)) {
    *source = "sysfs";
  } else {
    // Nothing readable: the CPUs this process may use, as one node of one-CPU cores.
    host = TopoHost();
    TopoNuma n;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) n.cores.push_back(TopoCore{{c}});
    }
    if (n.cores.empty()) n.cores.push_back(TopoCore{{0}});
    host.numaNodes.push_back(n);
    *source = "sched_getaffinity";
  }
  host.id = hostId.substr(0, kMaxHostIdChars);
  return host;
}

}  // namespace strata
