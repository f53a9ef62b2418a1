// Detecting this machine: NUMA nodes, packages, cores, GPUs and NICs with their PCI addresses and
// NUMA affinity, NIC link speeds. hwloc when the build found it (detect_hwloc.cc, the only file that
// includes hwloc.h), else /sys and /proc read directly (detect_sysfs.cc). Both give the same graph
// for the same machine; the tests compare them.
#pragma once

#include <cstdint>
#include <string>

#include "topology/topology_graph.h"

namespace strata {

// True when this build links hwloc.
bool HwlocAvailable();

// This machine as one host named `hostId`. Never fails: hwloc first (when built in), then sysfs,
// then, when even sysfs is unreadable, one NUMA node holding the CPUs this process may use.
// `source` says which one answered ("hwloc 2.9.0", "sysfs", "sched_getaffinity").
TopoHost DetectHost(const std::string& hostId, std::string* source);

// The detectors one by one (tests compare them). Each returns false with `err` set when it cannot
// describe the machine. `sysRoot` is normally "/sys"; tests point it at a fake tree.
bool DetectHostWithHwloc(TopoHost* out, std::string* version, std::string* err);
bool DetectHostFromSysfs(const std::string& sysRoot, TopoHost* out, std::string* err);

// Link speed of a network interface in Mbit/s from <sysRoot>/class/net/<ifname>/speed, or, for an
// InfiniBand port, the rate of its RDMA device. 0 when the interface reports none (veth, lo, virtio,
// a link that is down).
uint32_t NicSpeedMbps(const std::string& sysRoot, const std::string& ifname);

// Shared by both detectors: fills what sysfs alone knows about a NIC (type, speed, RDMA device) and
// the NUMA node of devices whose affinity is unknown on a one-node host.
void CompleteNicFromSysfs(const std::string& sysRoot, TopoNic* nic);
void FinishDetectedHost(TopoHost* host);

// GPUs are PCI display or 3D controllers of NVIDIA (0x10de) or AMD (0x1002); other vendors' display
// functions (a VM's virtual VGA) are not compute devices.
bool IsComputeGpu(uint16_t classId, uint16_t vendorId);

}  // namespace strata
