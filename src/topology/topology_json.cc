#include "topology/topology_json.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "topology/cpu_list.h"
#include "topology/json_reader.h"

namespace strata {

namespace {

constexpr size_t kMaxFileBytes = 4 << 20;
constexpr size_t kMaxModelChars = 255;
constexpr size_t kMaxTextChars = 1024;        // source, description
constexpr uint32_t kMaxSpeedMbps = 10000000;  // 10 Tbit/s
constexpr int kMaxNvLinksPerPair = 64;

// Where errors go: the first one wins, prefixed with "NAME:LINE: ".
class Ctx {
 public:
  explicit Ctx(const std::string& name) : name_(name) {}
  bool fail(int line, const std::string& what) {
    if (err_.empty()) err_ = name_ + ":" + std::to_string(line) + ": " + what;
    return false;
  }
  const std::string& error() const { return err_; }

 private:
  const std::string& name_;
  std::string err_;
};

// The members of one object, taken one by one; done() refuses the keys nobody took, so that a typo
// in a file is an error rather than a silently ignored setting.
class Fields {
 public:
  Fields(Ctx& ctx, const JsonValue& v, std::string what) : ctx_(ctx), v_(v), what_(std::move(what)) {}

  bool isObject() {
    if (v_.type == JsonValue::Type::Object) return true;
    return ctx_.fail(v_.line, what_ + " must be an object, not " + JsonTypeName(v_.type));
  }
  const JsonValue* take(const char* key) {
    known_.push_back(key);
    return v_.find(key);
  }
  bool require(const char* key, const JsonValue** out) {
    *out = take(key);
    if (*out) return true;
    return ctx_.fail(v_.line, what_ + " has no \"" + key + "\"");
  }
  bool done() {
    for (const auto& m : v_.members) {
      if (std::find(known_.begin(), known_.end(), m.first) != known_.end()) continue;
      std::string list;
      for (const std::string& k : known_) list += (list.empty() ? "" : ", ") + k;
      return ctx_.fail(m.second.line, "unknown key \"" + m.first + "\" in " + what_ + " (known keys: " + list + ")");
    }
    return true;
  }
  const std::string& what() const { return what_; }

 private:
  Ctx& ctx_;
  const JsonValue& v_;
  std::string what_;
  std::vector<std::string> known_;
};

bool GetString(Ctx& ctx, const JsonValue& v, const std::string& what, size_t maxLen, std::string* out) {
  if (v.type != JsonValue::Type::String)
    return ctx.fail(v.line, what + " must be a string, not " + JsonTypeName(v.type));
  if (v.str.size() > maxLen)
    return ctx.fail(v.line, what + " is longer than " + std::to_string(maxLen) + " characters");
  *out = v.str;
  return true;
}

bool GetInt(Ctx& ctx, const JsonValue& v, const std::string& what, int64_t lo, int64_t hi, int64_t* out) {
  if (v.type != JsonValue::Type::Number || !v.integral || v.number < static_cast<double>(lo) ||
      v.number > static_cast<double>(hi))
    return ctx.fail(v.line, what + " must be an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
  *out = static_cast<int64_t>(v.number);
  return true;
}

bool GetDouble(Ctx& ctx, const JsonValue& v, const std::string& what, double lo, double hi, bool loOpen, double* out) {
  if (v.type != JsonValue::Type::Number || v.number < lo || (loOpen && v.number == lo) || v.number > hi)
    return ctx.fail(
        v.line, what + " must be a number " + (loOpen ? "above " : "from ") + JsonNumber(lo) + " to " + JsonNumber(hi));
  *out = v.number;
  return true;
}

bool GetArray(Ctx& ctx, const JsonValue& v, const std::string& what, size_t maxItems) {
  if (v.type != JsonValue::Type::Array)
    return ctx.fail(v.line, what + " must be an array, not " + JsonTypeName(v.type));
  if (v.items.size() > maxItems)
    return ctx.fail(v.line, what + " has more than " + std::to_string(maxItems) + " elements");
  return true;
}

// Device names: what FindEndpoint and logs can carry without quoting.
bool GetName(Ctx& ctx, const JsonValue& v, const std::string& what, std::string* out) {
  if (!GetString(ctx, v, what, kMaxDeviceNameChars, out)) return false;
  bool good = !out->empty();
  for (char c : *out)
    good &= (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
            c == '.' || c == ':';
  if (!good) return ctx.fail(v.line, what + " \"" + *out + "\" must be 1-63 characters of A-Z a-z 0-9 _ - . :");
  return true;
}

bool GetPci(Ctx& ctx, const JsonValue& v, const std::string& what, std::string* out) {
  if (!GetString(ctx, v, what, 16, out)) return false;
  // dddd:bb:dd.f, lower-case hex, as the kernel names PCI functions in /sys/bus/pci/devices.
  static const char kShape[] = "xxxx:xx:xx.x";
  bool good = out->size() == sizeof(kShape) - 1;
  for (size_t i = 0; good && i < out->size(); ++i) {
    const char c = (*out)[i];
    good = kShape[i] == 'x' ? ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) : c == kShape[i];
  }
  if (!good)
    return ctx.fail(v.line, what + " \"" + *out + "\" is not a PCI address like 0000:3b:00.0 (lower-case hex)");
  return true;
}

bool GetPciId(Ctx& ctx, const JsonValue& v, const std::string& what, uint16_t* out) {
  std::string s;
  if (!GetString(ctx, v, what, 6, &s)) return false;
  unsigned x = 0;
  bool good = s.size() == 6 && s[0] == '0' && s[1] == 'x';
  for (size_t i = 2; good && i < s.size(); ++i) {
    const char c = s[i];
    good = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    x = x * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
  }
  if (!good) return ctx.fail(v.line, what + " \"" + s + "\" is not a PCI id like 0x10de (lower-case hex)");
  *out = static_cast<uint16_t>(x);
  return true;
}

bool GetNumaRef(Ctx& ctx, const JsonValue& v, const std::string& what, const TopoHost& host, int* out) {
  int64_t x = 0;
  if (!GetInt(ctx, v, what, -1, kMaxCpuIndex, &x)) return false;
  if (x >= 0 && host.numaIndex(static_cast<int>(x)) < 0)
    return ctx.fail(v.line, what + " is " + std::to_string(x) + ", but the host has no NUMA node with that os_index");
  *out = static_cast<int>(x);
  return true;
}

bool ParseLinks(Ctx& ctx, const JsonValue& v, LinkTable* table) {
  Fields f(ctx, v, "\"links\"");
  if (!f.isObject()) return false;
  for (int i = 0; i < kLinkClassCount; ++i) {
    const LinkClass c = static_cast<LinkClass>(i);
    const std::string what = std::string("links.") + LinkClassName(c);
    const JsonValue* cv = f.take(LinkClassName(c));
    if (!cv) continue;
    Fields cf(ctx, *cv, what);
    if (!cf.isObject()) return false;
    const JsonValue* lat = cf.take("latency_us");
    const JsonValue* bw = cf.take("bandwidth_gbs");
    if (!cf.done()) return false;
    if (!lat && !bw) return ctx.fail(cv->line, what + " needs \"latency_us\", \"bandwidth_gbs\" or both");
    if (lat && !GetDouble(ctx, *lat, what + ".latency_us", 0, 1e6, false, &(*table)[c].latencyUs)) return false;
    if (bw && !GetDouble(ctx, *bw, what + ".bandwidth_gbs", 0, 1e6, true, &(*table)[c].bandwidthGBs)) return false;
  }
  return f.done();
}

bool ParseNuma(Ctx& ctx, const JsonValue& v, const std::string& what, std::set<int>* seenCpus, TopoNuma* n) {
  Fields f(ctx, v, what);
  if (!f.isObject()) return false;
  const JsonValue *os = nullptr, *cores = nullptr;
  if (!f.require("os_index", &os) || !f.require("cores", &cores)) return false;
  const JsonValue* pkg = f.take("package");
  const JsonValue* mem = f.take("memory_mb");
  if (!f.done()) return false;
  int64_t x = 0;
  if (!GetInt(ctx, *os, what + ".os_index", 0, kMaxCpuIndex, &x)) return false;
  n->osIndex = static_cast<int>(x);
  if (pkg) {
    if (!GetInt(ctx, *pkg, what + ".package", -1, kMaxCpuIndex, &x)) return false;
    n->package = static_cast<int>(x);
  }
  if (mem) {
    if (!GetInt(ctx, *mem, what + ".memory_mb", 0, int64_t(1) << 40, &x)) return false;
    n->memoryMb = static_cast<uint64_t>(x);
  }
  if (!GetArray(ctx, *cores, what + ".cores", kMaxCpuIndex + 1)) return false;
  for (size_t i = 0; i < cores->items.size(); ++i) {
    const JsonValue& cv = cores->items[i];
    const std::string cw = what + ".cores[" + std::to_string(i) + "]";
    std::string text, err;
    TopoCore core;
    if (!GetString(ctx, cv, cw, 4096, &text)) return false;
    if (!ParseCpuList(text, &core.cpus, &err)) return ctx.fail(cv.line, cw + ": " + err);
    if (core.cpus.empty()) return ctx.fail(cv.line, cw + " names no CPU");
    for (int c : core.cpus)
      if (!seenCpus->insert(c).second)
        return ctx.fail(cv.line, cw + " names CPU " + std::to_string(c) + ", which an earlier core of this host has");
    n->cores.push_back(std::move(core));
  }
  std::sort(n->cores.begin(), n->cores.end(),
            [](const TopoCore& a, const TopoCore& b) { return a.cpus.front() < b.cpus.front(); });
  return true;
}

bool ParseGpu(Ctx& ctx, const JsonValue& v, const std::string& what, const TopoHost& host, TopoGpu* g) {
  Fields f(ctx, v, what);
  if (!f.isObject()) return false;
  const JsonValue *name = nullptr, *pci = nullptr;
  if (!f.require("name", &name) || !f.require("pci", &pci)) return false;
  const JsonValue* numa = f.take("numa");
  const JsonValue* vendor = f.take("vendor");
  const JsonValue* device = f.take("device");
  const JsonValue* model = f.take("model");
  if (!f.done()) return false;
  if (!GetName(ctx, *name, what + ".name", &g->name) || !GetPci(ctx, *pci, what + ".pci", &g->pci)) return false;
  if (numa && !GetNumaRef(ctx, *numa, what + ".numa", host, &g->numa)) return false;
  if (vendor && !GetPciId(ctx, *vendor, what + ".vendor", &g->vendorId)) return false;
  if (device && !GetPciId(ctx, *device, what + ".device", &g->deviceId)) return false;
  if (model && !GetString(ctx, *model, what + ".model", kMaxModelChars, &g->model)) return false;
  return true;
}

bool ParseNic(Ctx& ctx, const JsonValue& v, const std::string& what, const TopoHost& host, TopoNic* n) {
  Fields f(ctx, v, what);
  if (!f.isObject()) return false;
  const JsonValue* name = nullptr;
  if (!f.require("name", &name)) return false;
  const JsonValue* pci = f.take("pci");
  const JsonValue* numa = f.take("numa");
  const JsonValue* speed = f.take("speed_mbps");
  const JsonValue* type = f.take("type");
  const JsonValue* rdma = f.take("rdma");
  if (!f.done()) return false;
  if (!GetName(ctx, *name, what + ".name", &n->name)) return false;
  if (pci && !GetPci(ctx, *pci, what + ".pci", &n->pci)) return false;
  if (numa && !GetNumaRef(ctx, *numa, what + ".numa", host, &n->numa)) return false;
  int64_t x = 0;
  if (speed) {
    if (!GetInt(ctx, *speed, what + ".speed_mbps", 0, kMaxSpeedMbps, &x)) return false;
    n->speedMbps = static_cast<uint32_t>(x);
  }
  if (type) {
    if (!GetString(ctx, *type, what + ".type", 16, &n->type)) return false;
    if (n->type != "ethernet" && n->type != "infiniband")
      return ctx.fail(type->line, what + ".type must be \"ethernet\" or \"infiniband\", not \"" + n->type + "\"");
  }
  if (rdma && !GetName(ctx, *rdma, what + ".rdma", &n->rdma)) return false;
  return true;
}

bool ParseNvLink(Ctx& ctx, const JsonValue& v, const std::string& what, const TopoHost& host, TopoNvLink* l) {
  Fields f(ctx, v, what);
  if (!f.isObject()) return false;
  const JsonValue* gpus = nullptr;
  if (!f.require("gpus", &gpus)) return false;
  const JsonValue* count = f.take("count");
  if (!f.done()) return false;
  if (!GetArray(ctx, *gpus, what + ".gpus", 2)) return false;
  if (gpus->items.size() != 2) return ctx.fail(gpus->line, what + ".gpus must name exactly two GPUs");
  int idx[2];
  for (int i = 0; i < 2; ++i) {
    std::string name;
    if (!GetString(ctx, gpus->items[i], what + ".gpus[" + std::to_string(i) + "]", kMaxDeviceNameChars, &name))
      return false;
    idx[i] = host.gpuIndex(name);
    if (idx[i] < 0)
      return ctx.fail(gpus->items[i].line, what + " names GPU \"" + name + "\", which the host does not have");
  }
  if (idx[0] == idx[1]) return ctx.fail(gpus->line, what + " joins a GPU to itself");
  l->gpuA = std::min(idx[0], idx[1]);
  l->gpuB = std::max(idx[0], idx[1]);
  if (count) {
    int64_t x = 0;
    if (!GetInt(ctx, *count, what + ".count", 1, kMaxNvLinksPerPair, &x)) return false;
    l->count = static_cast<int>(x);
  }
  return true;
}

bool ParseHost(Ctx& ctx, const JsonValue& v, const std::string& what, TopoHost* h) {
  Fields f(ctx, v, what);
  if (!f.isObject()) return false;
  const JsonValue *id = nullptr, *numa = nullptr;
  if (!f.require("id", &id) || !f.require("numa_nodes", &numa)) return false;
  const JsonValue* gpus = f.take("gpus");
  const JsonValue* nics = f.take("nics");
  const JsonValue* nvlinks = f.take("nvlinks");
  if (!f.done()) return false;
  if (!GetString(ctx, *id, what + ".id", kMaxHostIdChars, &h->id)) return false;
  bool printable = !h->id.empty();
  for (char c : h->id) printable &= c >= 0x20 && c < 0x7f;
  if (!printable) return ctx.fail(id->line, what + ".id must be 1-127 printable ASCII characters");

  if (!GetArray(ctx, *numa, what + ".numa_nodes", kMaxNumaNodesPerHost)) return false;
  if (numa->items.empty()) return ctx.fail(numa->line, what + ".numa_nodes is empty: a host has at least one");
  std::set<int> cpus;
  for (size_t i = 0; i < numa->items.size(); ++i) {
    TopoNuma n;
    const std::string nw = what + ".numa_nodes[" + std::to_string(i) + "]";
    if (!ParseNuma(ctx, numa->items[i], nw, &cpus, &n)) return false;
    if (h->numaIndex(n.osIndex) >= 0)
      return ctx.fail(numa->items[i].line, nw + ".os_index " + std::to_string(n.osIndex) + " appears twice");
    h->numaNodes.push_back(std::move(n));
  }
  if (cpus.empty()) return ctx.fail(numa->line, what + " has no cores in any NUMA node");
  std::sort(h->numaNodes.begin(), h->numaNodes.end(),
            [](const TopoNuma& a, const TopoNuma& b) { return a.osIndex < b.osIndex; });

  std::set<std::string> names;
  if (gpus) {
    if (!GetArray(ctx, *gpus, what + ".gpus", kMaxGpusPerHost)) return false;
    for (size_t i = 0; i < gpus->items.size(); ++i) {
      TopoGpu g;
      const std::string gw = what + ".gpus[" + std::to_string(i) + "]";
      if (!ParseGpu(ctx, gpus->items[i], gw, *h, &g)) return false;
      if (!names.insert(g.name).second)
        return ctx.fail(gpus->items[i].line, gw + ".name \"" + g.name + "\" is used twice on this host");
      h->gpus.push_back(std::move(g));
    }
  }
  if (nics) {
    if (!GetArray(ctx, *nics, what + ".nics", kMaxNicsPerHost)) return false;
    for (size_t i = 0; i < nics->items.size(); ++i) {
      TopoNic n;
      const std::string nw = what + ".nics[" + std::to_string(i) + "]";
      if (!ParseNic(ctx, nics->items[i], nw, *h, &n)) return false;
      if (!names.insert(n.name).second)
        return ctx.fail(nics->items[i].line, nw + ".name \"" + n.name + "\" is used twice on this host");
      h->nics.push_back(std::move(n));
    }
  }
  if (nvlinks) {
    if (!GetArray(ctx, *nvlinks, what + ".nvlinks", kMaxGpusPerHost * (kMaxGpusPerHost - 1) / 2)) return false;
    for (size_t i = 0; i < nvlinks->items.size(); ++i) {
      TopoNvLink l;
      const std::string lw = what + ".nvlinks[" + std::to_string(i) + "]";
      if (!ParseNvLink(ctx, nvlinks->items[i], lw, *h, &l)) return false;
      if (h->nvlinkCount(l.gpuA, l.gpuB) > 0)
        return ctx.fail(nvlinks->items[i].line, lw + " joins " + h->gpus[l.gpuA].name + " and " + h->gpus[l.gpuB].name +
                                                    " again: give one entry with a count");
      h->nvlinks.push_back(l);
    }
    std::sort(h->nvlinks.begin(), h->nvlinks.end(), [](const TopoNvLink& a, const TopoNvLink& b) {
      return a.gpuA != b.gpuA ? a.gpuA < b.gpuA : a.gpuB < b.gpuB;
    });
  }
  return true;
}

bool ParseGraph(Ctx& ctx, const JsonValue& v, TopologyGraph* g) {
  Fields f(ctx, v, "the top level");
  if (!f.isObject()) return false;
  const JsonValue* version = f.take("strata_topology");
  if (!version)
    return ctx.fail(v.line, "not a strata topology: the top-level object has no \"strata_topology\" version key");
  const JsonValue* source = f.take("source");
  const JsonValue* description = f.take("description");
  const JsonValue* links = f.take("links");
  const JsonValue* hosts = nullptr;
  if (!f.require("hosts", &hosts)) return false;
  if (!f.done()) return false;
  int64_t x = 0;
  if (!GetInt(ctx, *version, "\"strata_topology\" (the format version)", kTopologyFormatVersion, kTopologyFormatVersion,
              &x))
    return false;
  if (source && !GetString(ctx, *source, "\"source\"", kMaxTextChars, &g->source)) return false;
  if (description && !GetString(ctx, *description, "\"description\"", kMaxTextChars, &g->description)) return false;
  if (links && !ParseLinks(ctx, *links, &g->links)) return false;
  if (!GetArray(ctx, *hosts, "\"hosts\"", kMaxTopoHosts)) return false;
  if (hosts->items.empty()) return ctx.fail(hosts->line, "\"hosts\" is empty: a topology has at least one host");
  for (size_t i = 0; i < hosts->items.size(); ++i) {
    TopoHost h;
    const std::string hw = "hosts[" + std::to_string(i) + "]";
    if (!ParseHost(ctx, hosts->items[i], hw, &h)) return false;
    if (g->hostIndex(h.id) >= 0)
      return ctx.fail(hosts->items[i].line, hw + ".id \"" + h.id + "\" is used by an earlier host");
    g->hosts.push_back(std::move(h));
  }
  return true;
}

std::string HexId(uint16_t x) {
  char buf[8];
  snprintf(buf, sizeof(buf), "0x%04x", x);
  return buf;
}

}  // namespace

bool ParseTopologyJson(const std::string& text, TopologyGraph* out, std::string* err, const std::string& sourceName) {
  JsonValue root;
  int line = 0;
  std::string what;
  JsonLimits limits;
  limits.maxBytes = kMaxFileBytes;
  if (!ParseJson(text, &root, &line, &what, limits)) {
    *err = sourceName + ":" + std::to_string(line) + ": " + what;
    return false;
  }
  Ctx ctx(sourceName);
  TopologyGraph g;
  g.source.clear();
  if (!ParseGraph(ctx, root, &g)) {
    *err = ctx.error();
    return false;
  }
  *out = std::move(g);
  return true;
}

std::string TopologyToJson(const TopologyGraph& g) {
  std::ostringstream o;
  o << "{\n  \"strata_topology\": " << kTopologyFormatVersion << ",\n";
  if (!g.source.empty()) o << "  \"source\": " << JsonQuote(g.source) << ",\n";
  if (!g.description.empty()) o << "  \"description\": " << JsonQuote(g.description) << ",\n";
  o << "  \"links\": {\n";
  for (int i = 0; i < kLinkClassCount; ++i) {
    const LinkParams& p = g.links.params[i];
    o << "    " << JsonQuote(LinkClassName(static_cast<LinkClass>(i)))
      << ": {\"latency_us\": " << JsonNumber(p.latencyUs) << ", \"bandwidth_gbs\": " << JsonNumber(p.bandwidthGBs)
      << "}" << (i + 1 < kLinkClassCount ? ",\n" : "\n");
  }
  o << "  },\n  \"hosts\": [\n";
  for (size_t hi = 0; hi < g.hosts.size(); ++hi) {
    const TopoHost& h = g.hosts[hi];
    o << "    {\n      \"id\": " << JsonQuote(h.id) << ",\n      \"numa_nodes\": [\n";
    for (size_t i = 0; i < h.numaNodes.size(); ++i) {
      const TopoNuma& n = h.numaNodes[i];
      o << "        {\"os_index\": " << n.osIndex << ", \"package\": " << n.package << ", \"memory_mb\": " << n.memoryMb
        << ", \"cores\": [";
      for (size_t c = 0; c < n.cores.size(); ++c) o << (c ? ", " : "") << JsonQuote(FormatCpuList(n.cores[c].cpus));
      o << "]}" << (i + 1 < h.numaNodes.size() ? ",\n" : "\n");
    }
    o << "      ],\n      \"gpus\": [";
    for (size_t i = 0; i < h.gpus.size(); ++i) {
      const TopoGpu& d = h.gpus[i];
      o << (i ? ",\n" : "\n") << "        {\"name\": " << JsonQuote(d.name) << ", \"pci\": " << JsonQuote(d.pci)
        << ", \"numa\": " << d.numa;
      if (d.vendorId) o << ", \"vendor\": " << JsonQuote(HexId(d.vendorId));
      if (d.deviceId) o << ", \"device\": " << JsonQuote(HexId(d.deviceId));
      if (!d.model.empty()) o << ", \"model\": " << JsonQuote(d.model);
      o << "}";
    }
    o << (h.gpus.empty() ? "" : "\n      ") << "],\n      \"nics\": [";
    for (size_t i = 0; i < h.nics.size(); ++i) {
      const TopoNic& n = h.nics[i];
      o << (i ? ",\n" : "\n") << "        {\"name\": " << JsonQuote(n.name);
      if (!n.pci.empty()) o << ", \"pci\": " << JsonQuote(n.pci);
      o << ", \"numa\": " << n.numa << ", \"speed_mbps\": " << n.speedMbps;
      if (!n.type.empty()) o << ", \"type\": " << JsonQuote(n.type);
      if (!n.rdma.empty()) o << ", \"rdma\": " << JsonQuote(n.rdma);
      o << "}";
    }
    o << (h.nics.empty() ? "" : "\n      ") << "],\n      \"nvlinks\": [";
    for (size_t i = 0; i < h.nvlinks.size(); ++i) {
      const TopoNvLink& l = h.nvlinks[i];
      o << (i ? ",\n" : "\n") << "        {\"gpus\": [" << JsonQuote(h.gpus[l.gpuA].name) << ", "
        << JsonQuote(h.gpus[l.gpuB].name) << "], \"count\": " << l.count << "}";
    }
    o << (h.nvlinks.empty() ? "" : "\n      ") << "]\n    }" << (hi + 1 < g.hosts.size() ? ",\n" : "\n");
  }
  o << "  ]\n}\n";
  return o.str();
}

bool LoadTopologyFile(const std::string& path, TopologyGraph* out, std::string* err) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    *err = path + ": cannot read the topology file: " + strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    *err = path + ": not a regular file";
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxFileBytes) {
    *err = path + ": " + std::to_string(st.st_size) + " bytes; a topology file may have at most " +
           std::to_string(kMaxFileBytes);
    return false;
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *err = path + ": cannot open the topology file: " + strerror(errno);
    return false;
  }
  std::string text;
  text.resize(kMaxFileBytes + 1);
  f.read(&text[0], static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(f.gcount()));
  return ParseTopologyJson(text, out, err, path);
}

bool operator==(const TopologyGraph& a, const TopologyGraph& b) {
  // The canonical text carries every field, so equal text is equal graphs.
  return TopologyToJson(a) == TopologyToJson(b);
}

}  // namespace strata
