#include "topology/topology_graph.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "topology/cpu_list.h"

namespace strata {

namespace {
const char* const kLinkClassNames[kLinkClassCount] = {"same_numa", "cross_numa", "pcie", "nvlink", "network"};

std::string Printf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Printf(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

std::string Plural(int n, const char* one, const char* many) { return std::to_string(n) + " " + (n == 1 ? one : many); }

std::string SpeedText(uint32_t mbps) {
  if (mbps == 0) return "speed unknown";
  if (mbps % 1000 == 0) return std::to_string(mbps / 1000) + " Gbit/s";
  return std::to_string(mbps) + " Mbit/s";
}
}  // namespace

const char* LinkClassName(LinkClass c) {
  const int i = static_cast<int>(c);
  return i >= 0 && i < kLinkClassCount ? kLinkClassNames[i] : "?";
}

bool ParseLinkClassName(const std::string& name, LinkClass* out) {
  for (int i = 0; i < kLinkClassCount; ++i)
    if (name == kLinkClassNames[i]) {
      *out = static_cast<LinkClass>(i);
      return true;
    }
  return false;
}

LinkTable LinkTable::Defaults() {
  LinkTable t;
  t[LinkClass::SameNuma] = {0.5, 8.0};   // one copy through a shared-memory FIFO on one socket
  t[LinkClass::CrossNuma] = {1.0, 6.0};  // the same across the socket interconnect
  t[LinkClass::Pcie] = {2.0, 24.0};      // PCIe Gen4 x16 as achieved (32 GB/s raw)
  t[LinkClass::NvLink] = {1.5, 25.0};    // per NVLink link and direction (NVLink 2, 3 and 4)
  t[LinkClass::Network] = {25.0, 1.25};  // TCP over a 10 Gbit/s NIC, used when no NIC speed is known
  return t;
}

bool LinkTable::operator==(const LinkTable& o) const {
  for (int i = 0; i < kLinkClassCount; ++i)
    if (!(params[i] == o.params[i])) return false;
  return true;
}

std::vector<int> TopoNuma::cpus() const {
  std::vector<int> out;
  for (const TopoCore& c : cores) out.insert(out.end(), c.cpus.begin(), c.cpus.end());
  std::sort(out.begin(), out.end());
  return out;
}

int TopoHost::packageCount() const {
  std::set<int> known;
  bool anyCores = false;
  for (const TopoNuma& n : numaNodes) {
    anyCores |= !n.cores.empty();
    if (n.package >= 0 && !n.cores.empty()) known.insert(n.package);
  }
  return std::max(static_cast<int>(known.size()), anyCores ? 1 : 0);
}

int TopoHost::coreCount() const {
  int n = 0;
  for (const TopoNuma& node : numaNodes) n += static_cast<int>(node.cores.size());
  return n;
}

int TopoHost::cpuCount() const { return static_cast<int>(cpus().size()); }

std::vector<int> TopoHost::cpus() const {
  std::vector<int> out;
  for (const TopoNuma& n : numaNodes) {
    std::vector<int> c = n.cpus();
    out.insert(out.end(), c.begin(), c.end());
  }
  std::sort(out.begin(), out.end());
  return out;
}

int TopoHost::numaIndex(int osIndex) const {
  for (size_t i = 0; i < numaNodes.size(); ++i)
    if (numaNodes[i].osIndex == osIndex) return static_cast<int>(i);
  return -1;
}

int TopoHost::numaOfCpus(const std::vector<int>& cpus) const {
  if (cpus.empty()) return -1;
  for (const TopoNuma& n : numaNodes)
    if (CpuListContains(n.cpus(), cpus)) return n.osIndex;
  return -1;
}

int TopoHost::nvlinkCount(int gpuA, int gpuB) const {
  if (gpuA > gpuB) std::swap(gpuA, gpuB);
  for (const TopoNvLink& l : nvlinks)
    if (l.gpuA == gpuA && l.gpuB == gpuB) return l.count;
  return 0;
}

int TopoHost::gpuIndex(const std::string& name) const {
  for (size_t i = 0; i < gpus.size(); ++i)
    if (gpus[i].name == name) return static_cast<int>(i);
  return -1;
}

int TopoHost::nicIndex(const std::string& name) const {
  for (size_t i = 0; i < nics.size(); ++i)
    if (nics[i].name == name) return static_cast<int>(i);
  return -1;
}

int TopoHost::nearestNic(int numa) const {
  int best = -1;
  for (int pass = 0; pass < 2 && best < 0; ++pass)
    for (size_t i = 0; i < nics.size(); ++i) {
      if (pass == 0 && (numa < 0 || nics[i].numa != numa)) continue;
      if (best < 0 || nics[i].speedMbps > nics[best].speedMbps) best = static_cast<int>(i);
    }
  return best;
}

int TopologyGraph::hostIndex(const std::string& id) const {
  for (size_t i = 0; i < hosts.size(); ++i)
    if (hosts[i].id == id) return static_cast<int>(i);
  return -1;
}

bool FindEndpoint(const TopologyGraph& graph, const std::string& spec, TopoEndpoint* out, std::string* err) {
  std::string hostPart, name = spec;
  int host = 0;
  const size_t slash = spec.rfind('/');
  if (slash != std::string::npos) {
    hostPart = spec.substr(0, slash);
    name = spec.substr(slash + 1);
    host = graph.hostIndex(hostPart);
    if (host < 0) {
      *err = "no host has id \"" + hostPart + "\"";
      return false;
    }
  }
  if (host >= static_cast<int>(graph.hosts.size())) {
    *err = "the topology has no hosts";
    return false;
  }
  const TopoHost& h = graph.hosts[host];
  out->host = host;
  if (name.size() > 4 && name.compare(0, 4, "numa") == 0) {
    char* end = nullptr;
    const long os = strtol(name.c_str() + 4, &end, 10);
    if (*end == '\0' && h.numaIndex(static_cast<int>(os)) >= 0) {
      out->kind = TopoEndpoint::Kind::Numa;
      out->index = h.numaIndex(static_cast<int>(os));
      return true;
    }
  }
  if (h.gpuIndex(name) >= 0) {
    out->kind = TopoEndpoint::Kind::Gpu;
    out->index = h.gpuIndex(name);
    return true;
  }
  if (h.nicIndex(name) >= 0) {
    out->kind = TopoEndpoint::Kind::Nic;
    out->index = h.nicIndex(name);
    return true;
  }
  *err = "host \"" + h.id + "\" has no NUMA node, GPU or NIC named \"" + name + "\"";
  return false;
}

LinkInfo ComposeLink(const LinkTable& table, bool sameHost, bool samePlace, const LinkEnd& a, const LinkEnd& b,
                     int nvlinks, bool singleNuma) {
  auto make = [&table](LinkClass c) {
    LinkInfo info;
    info.cls = c;
    info.latencyUs = table[c].latencyUs;
    info.bandwidthGBs = table[c].bandwidthGBs;
    return info;
  };
  if (!sameHost) {
    LinkInfo info = make(LinkClass::Network);
    uint32_t speed = 0;
    if (a.nicSpeedMbps && b.nicSpeedMbps)
      speed = std::min(a.nicSpeedMbps, b.nicSpeedMbps);
    else
      speed = std::max(a.nicSpeedMbps, b.nicSpeedMbps);
    if (speed) info.bandwidthGBs = speed / 8000.0;
    return info;
  }
  if (samePlace) return make(LinkClass::SameNuma);
  if (nvlinks > 0) {
    LinkInfo info = make(LinkClass::NvLink);
    info.bandwidthGBs *= nvlinks;
    return info;
  }
  // Unknown placement on a host with several NUMA nodes counts as apart: the cost model should not
  // promise a socket-local copy it may not get.
  const bool sameNuma = singleNuma || (a.numa >= 0 && a.numa == b.numa);
  if (!a.device && !b.device) return make(sameNuma ? LinkClass::SameNuma : LinkClass::CrossNuma);
  LinkInfo info = make(LinkClass::Pcie);
  if (!sameNuma) {
    const LinkParams& x = table[LinkClass::CrossNuma];
    info.latencyUs += x.latencyUs;
    info.bandwidthGBs = std::min(info.bandwidthGBs, x.bandwidthGBs);
  }
  return info;
}

LinkInfo LinkBetween(const TopologyGraph& graph, const TopoEndpoint& a, const TopoEndpoint& b) {
  auto end = [&graph](const TopoEndpoint& e) {
    LinkEnd out;
    const TopoHost& h = graph.hosts[e.host];
    switch (e.kind) {
      case TopoEndpoint::Kind::Numa: {
        out.numa = h.numaNodes[e.index].osIndex;
        const int nic = h.nearestNic(out.numa);
        out.nicSpeedMbps = nic >= 0 ? h.nics[nic].speedMbps : 0;
        break;
      }
      case TopoEndpoint::Kind::Gpu: {
        out.numa = h.gpus[e.index].numa;
        out.device = true;
        out.gpu = e.index;
        const int nic = h.nearestNic(out.numa);
        out.nicSpeedMbps = nic >= 0 ? h.nics[nic].speedMbps : 0;
        break;
      }
      case TopoEndpoint::Kind::Nic:
        out.numa = h.nics[e.index].numa;
        out.device = true;
        out.nicSpeedMbps = h.nics[e.index].speedMbps;
        break;
    }
    return out;
  };
  const LinkEnd ea = end(a), eb = end(b);
  const bool sameHost = a.host == b.host;
  const bool samePlace = sameHost && a.kind == b.kind && a.index == b.index;
  int nvlinks = 0;
  if (sameHost && a.kind == TopoEndpoint::Kind::Gpu && b.kind == TopoEndpoint::Kind::Gpu)
    nvlinks = graph.hosts[a.host].nvlinkCount(a.index, b.index);
  return ComposeLink(graph.links, sameHost, samePlace, ea, eb, nvlinks, graph.hosts[a.host].numaNodes.size() == 1);
}

std::string SummarizeHost(const TopoHost& h) {
  return Plural(h.packageCount(), "package", "packages") + ", " +
         Plural(static_cast<int>(h.numaNodes.size()), "NUMA node", "NUMA nodes") + ", " +
         Plural(h.coreCount(), "core", "cores") + ", " + Plural(h.cpuCount(), "CPU", "CPUs") + ", " +
         Plural(static_cast<int>(h.gpus.size()), "GPU", "GPUs") + ", " +
         Plural(static_cast<int>(h.nics.size()), "NIC", "NICs");
}

std::string DescribeHost(const TopoHost& h) {
  std::string out = "  host " + h.id + ": " + SummarizeHost(h) + "\n";
  for (const TopoNuma& n : h.numaNodes) {
    out +=
        Printf("    NUMA node %d: package %d, %s, CPUs %s, %llu MiB\n", n.osIndex, n.package,
               Plural(static_cast<int>(n.cores.size()), "core", "cores").c_str(),
               n.cores.empty() ? "none" : FormatCpuList(n.cpus()).c_str(), static_cast<unsigned long long>(n.memoryMb));
  }
  for (const TopoGpu& g : h.gpus)
    out += Printf("    GPU %s: PCI %s, NUMA node %d, %04x:%04x%s%s\n", g.name.c_str(), g.pci.c_str(), g.numa,
                  g.vendorId, g.deviceId, g.model.empty() ? "" : " ", g.model.c_str());
  for (const TopoNic& n : h.nics)
    out += Printf("    NIC %s: PCI %s, NUMA node %d, %s%s%s%s%s\n", n.name.c_str(),
                  n.pci.empty() ? "none" : n.pci.c_str(), n.numa, SpeedText(n.speedMbps).c_str(),
                  n.type.empty() ? "" : ", ", n.type.c_str(), n.rdma.empty() ? "" : ", RDMA ", n.rdma.c_str());
  for (const TopoNvLink& l : h.nvlinks)
    out += Printf("    NVLink %s <-> %s: %d link%s\n", h.gpus[l.gpuA].name.c_str(), h.gpus[l.gpuB].name.c_str(),
                  l.count, l.count == 1 ? "" : "s");
  return out;
}

std::string DescribeLinkTable(const LinkTable& table) {
  std::string out;
  for (int i = 0; i < kLinkClassCount; ++i)
    out += Printf("  %-10s latency %8.3f us, bandwidth %8.3f GB/s%s\n", kLinkClassNames[i], table.params[i].latencyUs,
                  table.params[i].bandwidthGBs, static_cast<LinkClass>(i) == LinkClass::NvLink ? " per link" : "");
  return out;
}

}  // namespace strata
