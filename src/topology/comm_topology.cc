#include "topology/comm_topology.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "topology/cpu_list.h"

namespace strata {

namespace {
std::string SpeedText(uint32_t mbps) {
  if (mbps == 0) return "speed unknown";
  if (mbps % 1000 == 0) return std::to_string(mbps / 1000) + " Gbit/s";
  return std::to_string(mbps) + " Mbit/s";
}

std::string LinkText(const LinkInfo& l) {
  char buf[128];
  snprintf(buf, sizeof(buf), "%s, %.3g us, %.4g GB/s", LinkClassName(l.cls), l.latencyUs, l.bandwidthGBs);
  return buf;
}

// Lower bandwidth is slower; at equal bandwidth, higher latency.
bool Slower(const LinkInfo& a, const LinkInfo& b) {
  return a.bandwidthGBs != b.bandwidthGBs ? a.bandwidthGBs < b.bandwidthGBs : a.latencyUs > b.latencyUs;
}

LinkInfo ClassDefault(const LinkTable& t, LinkClass c) {
  LinkInfo l;
  l.cls = c;
  l.latencyUs = t[c].latencyUs;
  l.bandwidthGBs = t[c].bandwidthGBs;
  return l;
}
}  // namespace

void EncodeRankPlace(const RankPlace& p, const LinkTable& links, RankPlaceWire* w) {
  memset(w, 0, sizeof(*w));
  w->numa = p.numa;
  w->numaCount = p.numaCount;
  w->gpu = p.gpu;
  w->gpuNuma = p.gpuNuma;
  w->nicSpeedMbps = p.nicSpeedMbps;
  w->flags = p.boundByStrata ? 1u : 0u;
  snprintf(w->nic, sizeof(w->nic), "%s", p.nic.c_str());
  for (size_t i = 0; i < p.nvlinks.size() && i < static_cast<size_t>(kMaxGpusPerHost); ++i)
    w->nvlinks[i] = p.nvlinks[i];
  for (int c : p.cpus)
    if (c >= 0 && c < 64 * kWireCpuWords) w->cpuMask[c / 64] |= uint64_t(1) << (c % 64);
  for (int i = 0; i < kLinkClassCount; ++i) {
    w->latencyUs[i] = links.params[i].latencyUs;
    w->bandwidthGBs[i] = links.params[i].bandwidthGBs;
  }
}

void DecodeRankPlace(const RankPlaceWire& w, const std::string& hostId, RankPlace* p, LinkTable* links) {
  *p = RankPlace();
  p->hostId = hostId;
  p->numa = w.numa >= 0 && w.numa <= kMaxCpuIndex ? w.numa : -1;
  p->numaCount = w.numaCount >= 1 && w.numaCount <= kMaxNumaNodesPerHost ? w.numaCount : 1;
  p->gpu = w.gpu >= 0 && w.gpu < kMaxGpusPerHost ? w.gpu : -1;
  p->gpuNuma = p->gpu >= 0 && w.gpuNuma >= 0 && w.gpuNuma <= kMaxCpuIndex ? w.gpuNuma : -1;
  p->nicSpeedMbps = w.nicSpeedMbps <= 10000000 ? w.nicSpeedMbps : 0;
  p->boundByStrata = (w.flags & 1u) != 0;
  p->nic.assign(w.nic, strnlen(w.nic, sizeof(w.nic)));
  if (p->gpu >= 0) p->nvlinks.assign(w.nvlinks, w.nvlinks + kMaxGpusPerHost);
  for (int c = 0; c < 64 * kWireCpuWords; ++c)
    if (w.cpuMask[c / 64] & (uint64_t(1) << (c % 64))) p->cpus.push_back(c);
  *links = LinkTable::Defaults();
  for (int i = 0; i < kLinkClassCount; ++i) {
    const double lat = w.latencyUs[i], bw = w.bandwidthGBs[i];
    if (std::isfinite(lat) && lat >= 0 && lat <= 1e6) links->params[i].latencyUs = lat;
    if (std::isfinite(bw) && bw > 0 && bw <= 1e6) links->params[i].bandwidthGBs = bw;
  }
}

CommTopology::CommTopology(std::vector<RankPlace> ranks, const LinkTable& links)
    : ranks_(std::move(ranks)), links_(links) {
  std::map<std::string, int> index;
  hostOf_.resize(ranks_.size());
  localRank_.resize(ranks_.size());
  for (size_t r = 0; r < ranks_.size(); ++r) {
    auto it = index.find(ranks_[r].hostId);
    if (it == index.end()) {
      it = index.emplace(ranks_[r].hostId, static_cast<int>(hosts_.size())).first;
      hosts_.emplace_back();
    }
    hostOf_[r] = it->second;
    localRank_[r] = static_cast<int>(hosts_[it->second].size());
    hosts_[it->second].push_back(static_cast<int>(r));
  }
  ranksPerHost_ = hosts_.empty() ? 0 : static_cast<int>(hosts_[0].size());
  for (const auto& h : hosts_)
    if (static_cast<int>(h.size()) != ranksPerHost_) ranksPerHost_ = 0;
}

CommTopology CommTopology::OnGraph(const TopologyGraph& graph, int ranksPerHost, bool onGpus) {
  std::vector<RankPlace> ranks;
  for (const TopoHost& h : graph.hosts) {
    std::vector<int> numaWithCores;
    for (size_t i = 0; i < h.numaNodes.size(); ++i)
      if (!h.numaNodes[i].cores.empty()) numaWithCores.push_back(static_cast<int>(i));
    for (int local = 0; local < ranksPerHost; ++local) {
      RankPlace p;
      p.hostId = h.id;
      p.numaCount = static_cast<int>(h.numaNodes.size());
      if (onGpus && local < static_cast<int>(h.gpus.size())) {
        p.gpu = local;
        p.gpuNuma = h.gpus[local].numa;
        p.numa = p.gpuNuma;
        p.nvlinks.assign(h.gpus.size(), 0);
        for (size_t g = 0; g < h.gpus.size(); ++g)
          p.nvlinks[g] = static_cast<uint8_t>(h.nvlinkCount(local, static_cast<int>(g)));
      } else if (!numaWithCores.empty()) {
        const TopoNuma& n = h.numaNodes[numaWithCores[local % numaWithCores.size()]];
        p.numa = n.osIndex;
        p.cpus = n.cpus();
      }
      if (p.numa >= 0) {
        const int idx = h.numaIndex(p.numa);
        if (idx >= 0 && p.cpus.empty()) p.cpus = h.numaNodes[idx].cpus();
      }
      const int nic = h.nearestNic(p.numa);
      if (nic >= 0) {
        p.nic = h.nics[nic].name;
        p.nicSpeedMbps = h.nics[nic].speedMbps;
      }
      ranks.push_back(std::move(p));
    }
  }
  return CommTopology(std::move(ranks), graph.links);
}

bool CommTopology::sameNuma(int a, int b) const {
  if (!sameHost(a, b)) return false;
  if (ranks_[a].numaCount == 1) return true;
  return ranks_[a].numa >= 0 && ranks_[a].numa == ranks_[b].numa;
}

LinkEnd CommTopology::endOf(int rank) const {
  const RankPlace& p = ranks_[rank];
  LinkEnd e;
  e.device = p.gpu >= 0;
  e.gpu = p.gpu;
  e.numa = e.device ? p.gpuNuma : p.numa;
  e.nicSpeedMbps = p.nicSpeedMbps;
  return e;
}

LinkInfo CommTopology::linkBetween(int a, int b) const {
  const bool sameHostAB = sameHost(a, b);
  int nvlinks = 0;
  const RankPlace &pa = ranks_[a], &pb = ranks_[b];
  if (sameHostAB && pa.gpu >= 0 && pb.gpu >= 0 && pa.gpu != pb.gpu && static_cast<size_t>(pb.gpu) < pa.nvlinks.size())
    nvlinks = pa.nvlinks[pb.gpu];
  return ComposeLink(links_, sameHostAB, a == b, endOf(a), endOf(b), nvlinks, pa.numaCount == 1);
}

std::vector<std::vector<int>> CommTopology::numaGroups() const {
  std::vector<std::vector<int>> out;
  for (const auto& h : hosts_) {
    std::map<int, size_t> groupOf;  // NUMA node (-1 unknown) -> group
    for (int r : h) {
      const int numa = ranks_[r].numaCount == 1 ? 0 : ranks_[r].numa;
      auto it = groupOf.find(numa);
      if (it == groupOf.end()) {
        it = groupOf.emplace(numa, out.size()).first;
        out.emplace_back();
      }
      out[it->second].push_back(r);
    }
  }
  return out;
}

std::vector<std::pair<int, int>> CommTopology::ranksAndCpus() const {
  std::vector<std::pair<int, int>> out;
  for (const auto& h : hosts_) {
    std::vector<int> cpus;
    for (int r : h) cpus = CpuListUnion(cpus, ranks_[r].cpus);
    out.emplace_back(static_cast<int>(h.size()), static_cast<int>(cpus.size()));
  }
  return out;
}

bool CommTopology::oversubscribed() const {
  for (const auto& [n, ncpu] : ranksAndCpus())
    if (n > ncpu) return true;
  return false;
}

int CommTopology::ranksPerCpu() const {
  int most = 1;
  for (const auto& [n, ncpu] : ranksAndCpus()) most = std::max(most, ncpu > 0 ? (n + ncpu - 1) / ncpu : n);
  return most;
}

LinkInfo CommTopology::slowestIntraHostLink(bool* any) const {
  bool found = false;
  LinkInfo worst = ClassDefault(links_, LinkClass::SameNuma);
  for (const auto& h : hosts_) {
    // Ranks that sit alike cost alike: one representative per (NUMA node, GPU), and a count.
    std::map<std::tuple<int, int, int>, std::pair<int, int>> kinds;  // -> (a rank, how many)
    for (int r : h) {
      auto key = std::make_tuple(ranks_[r].numa, ranks_[r].gpu, ranks_[r].gpuNuma);
      auto it = kinds.find(key);
      if (it == kinds.end())
        kinds.emplace(key, std::make_pair(r, 1));
      else
        ++it->second.second;
    }
    for (auto i = kinds.begin(); i != kinds.end(); ++i)
      for (auto j = i; j != kinds.end(); ++j) {
        int a = i->second.first, b = j->second.first;
        if (i == j) {
          if (i->second.second < 2) continue;
          for (int r : h)  // two ranks of one kind: any second one of that kind
            if (r != a && std::make_tuple(ranks_[r].numa, ranks_[r].gpu, ranks_[r].gpuNuma) == i->first) {
              b = r;
              break;
            }
        }
        const LinkInfo l = linkBetween(a, b);
        if (!found || Slower(l, worst)) worst = l;
        found = true;
      }
  }
  if (any) *any = found;
  return worst;
}

LinkInfo CommTopology::slowestInterHostLink(bool* any) const {
  if (any) *any = hosts_.size() >= 2;
  LinkInfo worst = ClassDefault(links_, LinkClass::Network);
  if (hosts_.size() < 2) return worst;
  // The network link's bandwidth depends only on the two ends' NIC speeds (ComposeLink): a host is
  // as fast as its slowest known NIC, and the slowest pair follows from the sorted host speeds.
  std::vector<uint32_t> known;
  int unknown = 0;
  for (const auto& h : hosts_) {
    uint32_t speed = 0;
    for (int r : h)
      if (ranks_[r].nicSpeedMbps && (speed == 0 || ranks_[r].nicSpeedMbps < speed)) speed = ranks_[r].nicSpeedMbps;
    if (speed)
      known.push_back(speed);
    else
      ++unknown;
  }
  std::sort(known.begin(), known.end());
  double bw = -1;
  if (!known.empty() && known.size() + unknown >= 2) bw = known[0] / 8000.0;
  if (unknown >= 2) bw = bw < 0 ? worst.bandwidthGBs : std::min(bw, worst.bandwidthGBs);
  worst.bandwidthGBs = bw;
  return worst;
}

std::string CommTopology::describe() const {
  std::string out = std::to_string(nranks()) + " rank" + (nranks() == 1 ? "" : "s") + " on " +
                    std::to_string(nhosts()) + " host" + (nhosts() == 1 ? "" : "s");
  if (ranksPerHost_) out += " (" + std::to_string(ranksPerHost_) + " per host)";
  out += "\n";
  for (int h = 0; h < nhosts(); ++h) {
    out += "  host " + std::to_string(h) + " \"" + hostId(h) + "\":\n";
    for (int r : hosts_[h]) {
      const RankPlace& p = ranks_[r];
      char buf[512];
      snprintf(buf, sizeof(buf), "    rank %d: NUMA node %s, CPUs %s%s%s, NIC %s (%s)%s\n", r,
               p.numa >= 0 ? std::to_string(p.numa).c_str() : "unknown",
               p.cpus.empty() ? "unknown" : FormatCpuList(p.cpus).c_str(), p.gpu >= 0 ? ", GPU " : "",
               p.gpu >= 0 ? std::to_string(p.gpu).c_str() : "", p.nic.empty() ? "unknown" : p.nic.c_str(),
               SpeedText(p.nicSpeedMbps).c_str(), p.boundByStrata ? ", bound by STRATA_BIND" : "");
      out += buf;
    }
  }
  bool anyIntra = false, anyInter = false;
  const LinkInfo intra = slowestIntraHostLink(&anyIntra), inter = slowestInterHostLink(&anyInter);
  out +=
      "  slowest link within a host: " + (anyIntra ? LinkText(intra) : std::string("none (one rank per host)")) + "\n";
  out += "  slowest link between hosts: " + (anyInter ? LinkText(inter) : std::string("none (one host)")) + "\n";
  return out;
}

}  // namespace strata
