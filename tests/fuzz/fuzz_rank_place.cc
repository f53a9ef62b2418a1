// libFuzzer target: the RankPlaceWire records every peer sends inside PeerInfo at init (DecodeRankPlace),
// and the communicator topology built from them. The input is up to 16 records, each one host-id byte and
// one RankPlaceWire; rank 0's link table is the one every rank uses. Whatever a peer sends, the decoded
// places must be in range and every link cost the selector reads must be finite and positive.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "topology/comm_topology.h"
#include "topology/cpu_list.h"

namespace {

bool Sane(const strata::LinkInfo& l) {
  return std::isfinite(l.latencyUs) && l.latencyUs >= 0 && std::isfinite(l.bandwidthGBs) && l.bandwidthGBs > 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  constexpr size_t kRecord = 1 + sizeof(strata::RankPlaceWire);
  const size_t n = size / kRecord;
  if (n == 0 || n > 16) return 0;
  std::vector<strata::RankPlace> places(n);
  strata::LinkTable links, ignored;
  for (size_t r = 0; r < n; ++r) {
    strata::RankPlaceWire wire;
    memcpy(&wire, data + r * kRecord + 1, sizeof(wire));
    const std::string host = "host" + std::to_string(data[r * kRecord] % 4);
    strata::DecodeRankPlace(wire, host, &places[r], r == 0 ? &links : &ignored);
    const strata::RankPlace& p = places[r];
    if (p.hostId != host || p.nic.size() > sizeof(wire.nic)) __builtin_trap();
    if (p.numaCount < 1 || p.numaCount > strata::kMaxNumaNodesPerHost) __builtin_trap();
    if (p.gpu < -1 || p.gpu >= strata::kMaxGpusPerHost) __builtin_trap();
    if (p.numa < -1 || p.numa > strata::kMaxCpuIndex || p.gpuNuma < -1) __builtin_trap();
    if (p.cpus.size() > 64u * strata::kWireCpuWords) __builtin_trap();
  }
  for (int c = 0; c < strata::kLinkClassCount; ++c)
    if (!Sane({strata::LinkClass::SameNuma, links.params[c].latencyUs, links.params[c].bandwidthGBs})) __builtin_trap();

  const strata::CommTopology topo(places, links);
  if (topo.nranks() != static_cast<int>(n)) __builtin_trap();
  size_t grouped = 0;
  for (const auto& g : topo.hostGroups()) grouped += g.size();
  if (grouped != n) __builtin_trap();
  grouped = 0;
  for (const auto& g : topo.numaGroups()) grouped += g.size();
  if (grouped != n) __builtin_trap();
  for (int a = 0; a < topo.nranks(); ++a)
    for (int b = 0; b < topo.nranks(); ++b)
      if (!Sane(topo.linkBetween(a, b))) __builtin_trap();
  if (!Sane(topo.slowestIntraHostLink()) || !Sane(topo.slowestInterHostLink())) __builtin_trap();
  if (topo.describe().empty()) __builtin_trap();
  return 0;
}
