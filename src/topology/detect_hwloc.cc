// Detection with hwloc: the only file of strata that includes hwloc.h. Built as a stub that
// reports "not built with hwloc" when CMake did not find it (STRATA_HAVE_HWLOC unset).
#include "topology/detect.h"

#if STRATA_HAVE_HWLOC
#include <hwloc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "topology/cpu_list.h"
#endif

namespace strata {

#if STRATA_HAVE_HWLOC

namespace {

std::vector<int> ToCpuList(hwloc_const_bitmap_t set) {
  std::vector<int> out;
  for (int i = hwloc_bitmap_first(set); i >= 0 && i <= kMaxCpuIndex; i = hwloc_bitmap_next(set, i)) out.push_back(i);
  return out;
}

std::string PciAddress(hwloc_obj_t pci) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%04x:%02x:%02x.%x", pci->attr->pcidev.domain, pci->attr->pcidev.bus,
           pci->attr->pcidev.dev, pci->attr->pcidev.func);
  return buf;
}

// The NUMA node next to an I/O object: the one node of its closest non-I/O ancestor, else -1.
int NumaOfIo(hwloc_topology_t topo, hwloc_obj_t io) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, io);
  if (!anc || !anc->nodeset || hwloc_bitmap_weight(anc->nodeset) != 1) return -1;
  return hwloc_bitmap_first(anc->nodeset);
}

// Owns a loaded topology.
class HwlocTopology {
 public:
  ~HwlocTopology() {
    if (init_) hwloc_topology_destroy(topo_);
  }
  bool load(std::string* err) {
    if (hwloc_topology_init(&topo_) != 0) {
      *err = "hwloc_topology_init failed";
      return false;
    }
    init_ = true;
    // PCI devices and their OS devices (network interfaces, RDMA devices), found through sysfs.
    hwloc_topology_set_io_types_filter(topo_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    // The whole machine, not only the CPUs this process's cgroup allows: ranks in different cgroups
    // of one host must describe the same host.
    hwloc_topology_set_flags(topo_, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    // Plugins that would start GPU runtimes or an X connection inside the application; GPUs are
    // found by their PCI class instead. libpciaccess is not needed either: the linux component reads
    // PCI from sysfs.
    for (const char* name : {"opencl", "gl", "cuda", "nvml", "rsmi", "levelzero", "pci"})
      hwloc_topology_set_components(topo_, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
    if (hwloc_topology_load(topo_) != 0) {
      *err = "hwloc_topology_load failed";
      return false;
    }
    return true;
  }
  hwloc_topology_t get() const { return topo_; }

 private:
  hwloc_topology_t topo_ = nullptr;
  bool init_ = false;
};

}  // namespace

bool HwlocAvailable() { return true; }

bool DetectHostWithHwloc(TopoHost* out, std::string* version, std::string* err) {
  *version = HWLOC_VERSION;  // of the headers built against; the library's API version is not a release number
  HwlocTopology t;
  if (!t.load(err)) return false;
  hwloc_topology_t topo = t.get();
  TopoHost host;

  // NUMA nodes with their cpusets; cores go to the first node (by os index) holding all their CPUs,
  // so a memory-only node that shares a package's cpuset gets none.
  std::vector<std::pair<TopoNuma, std::vector<int>>> nodes;
  for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n));) {
    TopoNuma numa;
    numa.osIndex = static_cast<int>(n->os_index);
    numa.memoryMb = n->attr ? n->attr->numanode.local_memory >> 20 : 0;
    nodes.emplace_back(numa, ToCpuList(n->cpuset));
  }
  if (nodes.empty()) {
    *err = "hwloc reports no NUMA node";
    return false;
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.first.osIndex < b.first.osIndex; });
  std::vector<std::set<int>> packages(nodes.size());
  auto addCore = [&](hwloc_obj_t obj) {
    TopoCore core{ToCpuList(obj->cpuset)};
    if (core.cpus.empty()) return;
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_PACKAGE, obj);
    for (size_t i = 0; i < nodes.size(); ++i)
      if (CpuListContains(nodes[i].second, core.cpus)) {
        packages[i].insert(pkg ? static_cast<int>(pkg->os_index) : 0);
        nodes[i].first.cores.push_back(std::move(core));
        return;
      }
  };
  if (hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0) {
    for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, c));) addCore(c);
  } else {
    // No core information from the OS: every hardware thread is a core.
    for (hwloc_obj_t c = nullptr; (c = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PU, c));) addCore(c);
  }
  for (size_t i = 0; i < nodes.size() && i < static_cast<size_t>(kMaxNumaNodesPerHost); ++i) {
    nodes[i].first.package = packages[i].size() == 1 ? *packages[i].begin() : -1;
    host.numaNodes.push_back(std::move(nodes[i].first));
  }

  // GPUs by PCI class; NICs are the network and RDMA OS devices of a PCI function.
  for (hwloc_obj_t p = nullptr; (p = hwloc_get_next_pcidev(topo, p));) {
    if (!IsComputeGpu(p->attr->pcidev.class_id, p->attr->pcidev.vendor_id)) continue;
    TopoGpu g;
    g.pci = PciAddress(p);
    g.numa = NumaOfIo(topo, p);
    g.vendorId = p->attr->pcidev.vendor_id;
    g.deviceId = p->attr->pcidev.device_id;
    if (const char* model = hwloc_obj_get_info_by_name(p, "PCIDevice")) g.model = std::string(model).substr(0, 255);
    host.gpus.push_back(g);
  }
  std::map<std::string, std::string> rdmaOfPci;  // PCI function -> its RDMA device
  std::vector<hwloc_obj_t> rdmaOnly;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topo, o));) {
    if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_OPENFABRICS || !o->parent || o->parent->type != HWLOC_OBJ_PCI_DEVICE)
      continue;
    rdmaOfPci[PciAddress(o->parent)] = o->name;
    rdmaOnly.push_back(o);
  }
  std::set<std::string> rdmaUsed;
  for (hwloc_obj_t o = nullptr; (o = hwloc_get_next_osdev(topo, o));) {
    if (o->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK || !o->parent || o->parent->type != HWLOC_OBJ_PCI_DEVICE ||
        !o->name || strlen(o->name) > kMaxDeviceNameChars)
      continue;
    TopoNic n;
    n.name = o->name;
    n.pci = PciAddress(o->parent);
    n.numa = NumaOfIo(topo, o->parent);
    auto it = rdmaOfPci.find(n.pci);
    if (it != rdmaOfPci.end()) n.rdma = it->second, rdmaUsed.insert(it->second);
    CompleteNicFromSysfs("/sys", &n);
    host.nics.push_back(n);
  }
  for (hwloc_obj_t o : rdmaOnly) {
    if (!o->name || rdmaUsed.count(o->name) || strlen(o->name) > kMaxDeviceNameChars) continue;
    TopoNic n;
    n.name = o->name;
    n.rdma = o->name;
    n.pci = PciAddress(o->parent);
    n.numa = NumaOfIo(topo, o->parent);
    CompleteNicFromSysfs("/sys", &n);
    host.nics.push_back(n);
  }
  FinishDetectedHost(&host);
  *out = std::move(host);
  return true;
}

#else  // !STRATA_HAVE_HWLOC

bool HwlocAvailable() { return false; }

bool DetectHostWithHwloc(TopoHost*, std::string* version, std::string* err) {
  version->clear();
  *err = "this build of strata has no hwloc (libhwloc-dev was not found when it was configured)";
  return false;
}

#endif

}  // namespace strata
