#include "core/config.h"

#include <cassert>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "core/log.h"

namespace strata {

const std::vector<KnobInfo>& AllKnobs() {
  // Never destroyed: the detached bootstrap root thread reads knobs (through the logger) and may still be
  // running while the process runs its exit-time destructors (ThreadSanitizer caught that race).
  static const std::vector<KnobInfo>* const knobs = new std::vector<KnobInfo>{
      {"STRATA_DEBUG", KnobType::String, "WARN", "log level: NONE, WARN, INFO or TRACE"},
      {"STRATA_DEBUG_SUBSYS", KnobType::String, "ALL",
       "comma list of log subsystems: INIT,COLL,NET,SHM,BOOT,ENV,TUNING or ALL"},
      {"STRATA_DEBUG_FILE", KnobType::String, "", "write the log to this file instead of stderr (%h host, %p pid)"},
      {"STRATA_TIMEOUT", KnobType::Int, "300", "seconds any init step or collective may wait for a peer"},
      {"STRATA_CHECK_CALLS", KnobType::Bool, "0",
       "1: ranks compare each collective's kind, count, datatype, op and root before running it (costs one "
       "small allgather per call)"},
      {"STRATA_NCHANNELS", KnobType::Int, "1", "ring channels per collective (1-16)"},
      {"STRATA_SHM_DISABLE", KnobType::Bool, "0", "1: use TCP between ranks of one host instead of shared memory"},
      {"STRATA_SOCKET_IFNAME", KnobType::String, "",
       "network interface whose IPv4 address TCP connections use (default: the one that reaches the root)"},
      {"STRATA_NSOCKS_PERPEER", KnobType::Int, "4", "TCP sockets per peer and channel (1-16)"},
      {"STRATA_HOSTID", KnobType::String, "",
       "host identity used to group ranks (default: hostname plus boot id); ranks with different ids use TCP"},
      {"STRATA_TOPO_FILE", KnobType::String, "",
       "topology file (JSON, docs/TOPOLOGY.md) to use instead of detecting this host; strata-info --topo writes one"},
      {"STRATA_BIND", KnobType::Bool, "0",
       "1: a rank not bound to CPUs binds itself at init to the cores of one NUMA node (its local rank's, round "
       "robin, else the one it runs on)"},
      {"STRATA_SLOT_BYTES", KnobType::Bytes, "128K", "size of one FIFO slot (4K-4M, a power of two)"},
      {"STRATA_NSLOTS", KnobType::Int, "8", "slots per connection FIFO (2-64)"},
      {"STRATA_DIRECT_MAX_BYTES", KnobType::Bytes, "16K",
       "allreduce at or below this size exchanges whole buffers instead of running the ring"},
      {"STRATA_ALGO", KnobType::String, "",
       "force algorithms: a bare name (ring, chain, direct, tree, rd, rhd, hier, hier_leader, pairwise) or "
       "collective:name entries joined by ';', e.g. allreduce:ring;broadcast:tree (docs/ALGORITHMS.md)"},
      {"STRATA_CALIBRATE", KnobType::Bool, "1",
       "1: measure link latency and bandwidth with a few small collectives when a communicator is created, for the "
       "algorithm selector's cost model; 0: use the topology's link classes (must agree on every rank)"},
      {"STRATA_TUNE", KnobType::Bool, "1",
       "1: where the cost model's leading algorithms for a size class are close (16 KiB up, timing them within 20 "
       "ms by the model's estimates), time them at the class's first call and keep the fastest; and from 4 MiB on "
       "buffers peers reach (strataMemAlloc, huge pages) time the in-place plan against the selector's on a shape's "
       "first 8 calls, and again every 1024 calls, and keep the faster; 0: the model decides alone, the in-place plan "
       "runs outright on such "
       "buffers (must agree on every rank)"},
      {"STRATA_SLOT_STORES", KnobType::String, "auto",
       "how a rank writes the shared-memory slots its peers read: cached (ordinary stores), streaming "
       "(non-temporal stores, through memory) or auto (per size class from 64 KiB, whichever its calls run faster "
       "in, tried again now and then; below 64 KiB cached); need not agree between ranks"},
      {"STRATA_WINDOW_BYTES", KnobType::Bytes, "1M",
       "each half of a rank's peer-mapped window in its shared-memory segment, for the oneshot and twoshot "
       "algorithms (buffers up to this size; twoshot allreduce up to half); 0 turns them off; must agree on every "
       "rank"},
      {"STRATA_CMA", KnobType::Bool, "1",
       "1: ranks of one host copy straight between each other's buffers (cross-memory attach, process_vm_readv and "
       "process_vm_writev; buffers from strataMemAlloc mapped instead) in the oneshot and twoshot algorithms for "
       "buffers larger than the window, where every rank's kernel allows it (probed at init); 0 (on any rank): never"},
      {"STRATA_HUGE_PAGES", KnobType::Int, "3",
       "N: an ordinary (malloc) buffer of up to 32 MiB (64 MiB passed in place) that this host's ranks reach by "
       "cross-memory attach is moved onto 2 MiB transparent huge pages (madvise MADV_COLLAPSE, Linux 6.1+) once it "
       "has been passed to N calls, and from 4 MiB calls whose ranks' buffers all lie on them may run in place as on "
       "shared buffers (STRATA_TUNE); 0: never (need not agree)"},
      {"STRATA_QUANT", KnobType::String, "",
       "quantize every eligible call (sum/avg of fp32, fp16, bf16): format[:block[:scale[:rounding[:seed]]]], "
       "e.g. int8:128 (docs/QUANTIZATION.md)"},
      {"STRATA_QUANT_MIN_BYTES", KnobType::Bytes, "1M",
       "calls below this size run exact even when STRATA_QUANT is set"},
      {"STRATA_SPIN_US", KnobType::Int, "10", "microseconds a waiting rank spins before it starts yielding the core"},
      {"STRATA_YIELD_US", KnobType::Int, "2000",
       "microseconds a waiting rank yields the core (sched_yield) before it sleeps"},
      {"STRATA_RANK", KnobType::Int, "-1", "this process's rank (set by stratarun)"},
      {"STRATA_NRANKS", KnobType::Int, "-1", "number of ranks (set by stratarun)"},
      {"STRATA_LOCAL_RANK", KnobType::Int, "-1", "rank among the ranks of this host (set by stratarun)"},
      {"STRATA_LOCAL_SIZE", KnobType::Int, "-1", "number of ranks on this host (set by stratarun)"},
      {"STRATA_ROOT_ADDR", KnobType::String, "", "host:port where rank 0 listens for the bootstrap"},
      {"STRATA_ROOT_FD", KnobType::Int, "-1", "listening socket inherited by rank 0 from stratarun"},
      {"STRATA_SECRET", KnobType::String, "",
       "job secret every connection must prove (set by stratarun; default derived from the root address)"},
  };
  return *knobs;
}

namespace {
const KnobInfo* Find(const char* name) {
  for (const KnobInfo& k : AllKnobs())
    if (strcmp(k.name, name) == 0) return &k;
  return nullptr;
}
}  // namespace

bool ConfigIsSet(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && v[0] != '\0';
}

std::string ConfigString(const char* name) {
  const KnobInfo* k = Find(name);
  assert(k != nullptr && "knob read before it was declared");
  const char* v = getenv(name);
  if (v != nullptr && v[0] != '\0') return v;
  return k ? k->defaultValue : "";
}

int64_t ConfigInt(const char* name) {
  const KnobInfo* k = Find(name);
  const std::string v = ConfigString(name);
  // Every integer knob is an int; a value that is not one (or would wrap when narrowed) is refused loudly.
  errno = 0;
  char* end = nullptr;
  const long long x = strtoll(v.c_str(), &end, 10);
  if (end != v.c_str() && *end == '\0' && errno == 0 && x >= INT32_MIN && x <= INT32_MAX)
    return x;
  const char* def = k ? k->defaultValue : "0";
  if (ConfigIsSet(name))
    STRATA_LOG(WARN, ENV, "%s=%s is not an integer in the range of an int; using the default %s", name, v.c_str(), def);
  return strtoll(def, nullptr, 10);
}

bool ConfigBool(const char* name) {
  std::string v = ConfigString(name);
  return v == "1" || v == "true" || v == "TRUE" || v == "yes" || v == "on";
}

bool ParseBytes(const std::string& text, uint64_t* out) {
  // Digits only (strtoull would take a sign, spaces and wrap "-1" to 2^64-1), and no overflow.
  size_t i = 0;
  uint64_t x = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
    const uint64_t digit = static_cast<uint64_t>(text[i] - '0');
    if (x > (UINT64_MAX - digit) / 10) return false;
    x = x * 10 + digit;
    ++i;
  }
  if (i == 0) return false;
  int shift = 0;
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k')) shift = 10, ++i;
  else if (i < text.size() && (text[i] == 'M' || text[i] == 'm')) shift = 20, ++i;
  else if (i < text.size() && (text[i] == 'G' || text[i] == 'g')) shift = 30, ++i;
  if (i < text.size() && (text[i] == 'B' || text[i] == 'b')) ++i;
  if (i != text.size()) return false;
  if (shift > 0 && x > (UINT64_MAX >> shift)) return false;
  *out = x << shift;
  return true;
}

uint64_t ConfigBytes(const char* name) {
  uint64_t x = 0;
  const std::string v = ConfigString(name);
  if (ParseBytes(v, &x)) return x;
  const KnobInfo* k = Find(name);
  const char* def = k ? k->defaultValue : "0";
  if (ConfigIsSet(name))
    STRATA_LOG(WARN, ENV, "%s=%s is not a byte size (digits, then K, M or G); using the default %s", name, v.c_str(),
               def);
  x = 0;
  ParseBytes(def, &x);
  return x;
}

std::string LauncherEnv(const char* name) {
  const char* v = getenv(name);
  return v ? v : "";
}

}  // namespace strata
