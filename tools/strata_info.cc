// strata-info: what this build and this machine give strata: version, SIMD path, the topology
// (detected, or STRATA_TOPO_FILE), and every config knob with its current value, default and
// description, and the algorithm the selector picks per collective and size: for the communicator
// of a job when launched as one (stratarun -n 4 strata-info --algos), else for a model of
// --ranks N --hosts H. --topo writes the topology as JSON, the format STRATA_TOPO_FILE reads.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sstream>
#include <string>

#include "algorithms/algorithm_table.h"
#include "algorithms/selector.h"
#include "api/comm_handle.h"
#include "core/calibration.h"
#include "core/communicator.h"
#include "core/config.h"
#include "exec/host_reduce.h"
#include "strata/strata.h"
#include "topology/cpu_list.h"
#include "topology/detect.h"
#include "topology/local_topology.h"
#include "topology/topology_json.h"

namespace {

void PrintKnobs() {
  printf("# Config knobs (environment; '*' marks a value set here)\n");
  for (const strata::KnobInfo& k : strata::AllKnobs()) {
    const bool set = strata::ConfigIsSet(k.name);
    printf("%c %-24s = %-12s (default %s)\n      %s\n", set ? '*' : ' ', k.name, strata::ConfigString(k.name).c_str(),
           k.defaultValue[0] ? k.defaultValue : "\"\"", k.description);
  }
}

// Every line of `text` with "# " in front.
void PrintCommented(const std::string& text) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) printf("#%s%s\n", line.empty() ? "" : " ", line.c_str());
}

bool PrintTopology() {
  strata::LocalTopology topo;
  strata::Status st = strata::GetLocalTopology(strata::HostId(), &topo);
  if (!st.ok()) {
    fprintf(stderr, "strata-info: %s\n", st.message().c_str());
    return false;
  }
  const strata::TopologyGraph& g = *topo.graph;
  printf("# Topology (%s; hwloc %s in this build)\n", topo.note.c_str(), strata::HwlocAvailable() ? "linked" : "not");
  if (!g.description.empty()) PrintCommented("  " + g.description);
  for (size_t h = 0; h < g.hosts.size(); ++h) {
    std::string text = strata::DescribeHost(g.hosts[h]);
    if (static_cast<int>(h) == topo.host && g.hosts.size() > 1) text.insert(text.find('\n'), "  <- this process");
    PrintCommented(text);
  }
  const strata::RankPlace me = strata::DescribeThisProcess(topo, "");
  printf("#   this process: CPUs %s, NUMA node %s\n", strata::FormatCpuList(me.cpus).c_str(),
         me.numa >= 0 ? std::to_string(me.numa).c_str() : "several");
  printf("# Link classes (latency and bandwidth the cost model uses)\n");
  PrintCommented(strata::DescribeLinkTable(g.links));
  printf("#\n");
  return true;
}

int DumpTopology() {
  strata::LocalTopology topo;
  strata::Status st = strata::GetLocalTopology(strata::HostId(), &topo);
  if (!st.ok()) {
    fprintf(stderr, "strata-info: %s\n", st.message().c_str());
    return 1;
  }
  fputs(strata::TopologyToJson(*topo.graph).c_str(), stdout);
  return 0;
}

std::string SizeName(uint64_t b) {
  if (b >= (1u << 20)) return std::to_string(b >> 20) + "M";
  if (b >= (1u << 10)) return std::to_string(b >> 10) + "K";
  return std::to_string(b);
}

// How a table cell was decided.
struct Choice {
  strata::AlgoId id = strata::AlgoId::Ring;
  char mark = ' ';  // '!' forced, '*' timed at the size class's first call, '~' to be timed on its calls
};
using ChooseFn = std::function<strata::Status(strata::CollKind kind, uint64_t bytes, Choice* out)>;

// One row per size, one column per collective, each cell from `choose`, in the same order on every rank of a job
// (a timed choice is a collective call); `print` false: decide only.
bool PrintChoices(const strata::CostInputs& in, const ChooseFn& choose, bool print) {
  if (print) {
    printf("# Cost model: %s\n", strata::DescribeCostInputs(in).c_str());
    printf(
        "# Algorithm per collective and size (bytes of the whole vector; '!' marks a forced one, as STRATA_ALGO "
        "or the config field set it; '*' one timed against the model's close candidates, STRATA_TUNE; '~' the model's "
        "choice, which a running job times against its close candidates on the class's first calls)\n");
    printf("# %8s", "size");
    for (int k = 0; k < strata::kNumCollKinds; ++k)
      printf(" %13s", strata::CollKindKey(static_cast<strata::CollKind>(k)));
    printf("\n");
  }
  for (uint64_t b = 8; b <= (uint64_t{256} << 20); b *= 4) {  // the whole vector, as the cost model counts it
    if (print) printf("  %8s", SizeName(b).c_str());
    for (int k = 0; k < strata::kNumCollKinds; ++k) {
      Choice c;
      const strata::Status st = choose(static_cast<strata::CollKind>(k), b, &c);
      if (!st.ok()) {
        fprintf(stderr, "strata-info: %s\n", st.message().c_str());
        return false;
      }
      if (print) printf(" %12s%c", strata::GetAlgoInfo(c.id).name, c.mark);
    }
    if (print) printf("\n");
  }
  if (print) printf("#\n");
  return true;
}

// Inside a job (a launcher's environment): the communicator's own selector, calibrated at init;
// rank 0 prints. Otherwise a model of `ranks` ranks on `hosts` hosts with the default link costs.
int PrintAlgorithms(int ranks, int hosts) {
  const bool launched = getenv("STRATA_RANK") || getenv("OMPI_COMM_WORLD_RANK") || getenv("SLURM_PROCID") ||
                        (getenv("RANK") && getenv("WORLD_SIZE"));
  if (launched) {
    strataComm_t comm = nullptr;
    if (strataCommInitFromEnv(&comm, nullptr) != strataSuccess) {
      fprintf(stderr, "strata-info: communicator init failed: %s\n", strataGetLastError(nullptr));
      return 1;
    }
    strata::Communicator& c = *comm->impl;
    if (c.rank() == 0) {
      const strata::CalibrationReport& cal = c.calibration();
      const char* recursive = c.nranks() >= 3 ? "rhd" : "rd";
      // The figures only some shapes measure: rd at 1 MiB (3+ ranks on one host), the 128 KiB pair (2 ranks).
      std::string more;
      char buf[128];
      if (cal.rdLargeUs > 0) {
        snprintf(buf, sizeof buf, ", rd %.1f us", cal.rdLargeUs);
        more += buf;
      }
      if (cal.midBytes > 0) {
        snprintf(buf, sizeof buf, ", %llu B ring allreduce %.1f us, rd %.1f us",
                 static_cast<unsigned long long>(cal.midBytes), cal.ringMidUs, cal.rdMidUs);
        more += buf;
      }
      if (cal.peerLargeUs > 0) {
        snprintf(buf, sizeof buf, "; in place, lined up: twoshot %.1f us, ring %.1f us", cal.peerLargeUs,
                 cal.peerRingUs);
        more += buf;
      }
      if (cal.elapsedMs > 0)
        printf(
            "# Calibration at init: %.1f ms (local rates and buffers %.1f ms, waiting for the last rank %.1f ms, small "
            "calls %.1f ms, large %.1f ms; %llu B ring allreduce %.1f us, %llu B ring allreduce %.1f us, %s %.1f "
            "us%s)\n",
            cal.elapsedMs, cal.localMs, cal.waitMs, cal.smallMs, cal.largeMs,
            static_cast<unsigned long long>(cal.smallBytes), cal.ringSmallUs,
            static_cast<unsigned long long>(cal.largeBytes), cal.ringLargeUs, recursive, cal.rhdLargeUs, more.c_str());
      else
        printf("# Calibration off (STRATA_CALIBRATE=0): link costs from the topology\n");
    }
    // Every rank decides every cell in the same order (timing a size class's candidates takes all of them).
    const bool ok = PrintChoices(
        c.costInputs(),
        [&c](strata::CollKind kind, uint64_t bytes, Choice* out) {
          if (c.settings().forced.get(kind, &out->id)) {
            out->mark = '!';
            return strata::Status::Ok();
          }
          strata::Communicator::ChoiceHow how = strata::Communicator::ChoiceHow::kModel;
          STRATA_CHECK(c.chooseAlgorithm(kind, bytes, &out->id, &how));
          out->mark = how == strata::Communicator::ChoiceHow::kTimed     ? '*'
                      : how == strata::Communicator::ChoiceHow::kOnCalls ? '~'
                                                                         : ' ';
          return strata::Status::Ok();
        },
        c.rank() == 0);
    if (ok && c.rank() == 0 && c.costInputs().peerAccess)
      printf(
          "# Where every rank passes buffers from strataMemAlloc, or ordinary buffers moved onto huge pages after "
          "STRATA_HUGE_PAGES calls, allreduce, allgather and reducescatter calls from %llu MiB run twoshot "
          "(allreduce) or oneshot in place whatever the table says\n#\n",
          static_cast<unsigned long long>(strata::kSharedBufferAgreeMinBytes >> 20));
    return strataCommDestroy(comm) == strataSuccess && ok ? 0 : 1;
  }
  if (ranks < 1 || hosts < 1 || hosts > ranks) {
    fprintf(stderr, "strata-info: --ranks must be at least 1 and --hosts between 1 and the ranks\n");
    return 2;
  }
  strata::PlanGeometry geo;
  geo.nranks = ranks;
  for (int r = 0; r < ranks; ++r) geo.hostOf.push_back(r * hosts / ranks);
  printf("# Not launched as a job: a model of %d rank(s) on %d host(s) with the default link costs (run it as\n"
         "# 'stratarun -n N strata-info --algos' for a real communicator's calibrated choices)\n",
         ranks, hosts);
  strata::CommSettings settings;
  strata::Status st = strata::ResolveSettings(nullptr, &settings);
  if (!st.ok()) {
    fprintf(stderr, "strata-info: %s\n", st.message().c_str());
    return 2;
  }
  strata::AlgoSelector sel(strata::CostInputsFromGeometry(geo));
  PrintChoices(
      sel.inputs(),
      [&](strata::CollKind kind, uint64_t bytes, Choice* out) {
        if (settings.forced.get(kind, &out->id))
          out->mark = '!';
        else
          out->id = sel.choose(kind, bytes);
        return strata::Status::Ok();
      },
      true);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  bool knobsOnly = false, algosOnly = false;
  int ranks = 2, hosts = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--knobs")) {
      knobsOnly = true;
    } else if (!strcmp(argv[i], "--algos")) {
      algosOnly = true;
    } else if ((!strcmp(argv[i], "--ranks") || !strcmp(argv[i], "--hosts")) && i + 1 < argc) {
      char* end = nullptr;
      const long v = strtol(argv[i + 1], &end, 10);
      if (!*argv[i + 1] || *end || v < 1 || v > 65536) {
        fprintf(stderr, "strata-info: %s needs a number from 1 to 65536, got '%s'\n", argv[i], argv[i + 1]);
        return 2;
      }
      (!strcmp(argv[i], "--ranks") ? ranks : hosts) = static_cast<int>(v);
      ++i;
    } else if (!strcmp(argv[i], "--topo")) {
      return DumpTopology();
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf(
          "usage: strata-info [--knobs | --topo | --algos [--ranks N --hosts H]]\n  prints the version, the reduction "
          "SIMD path, the host id, the topology, every STRATA_* knob and the algorithm choices\n  --knobs  the knobs "
          "alone\n  --topo   the topology as JSON (the format STRATA_TOPO_FILE reads)\n  --algos  the algorithm the "
          "selector picks per collective and size: launched as a job (stratarun -n 4 strata-info --algos), the job's "
          "communicator after its calibration; otherwise a model of N ranks (default 2) on H hosts (default 1)\n");
      return 0;
    } else {
      fprintf(stderr, "strata-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (algosOnly) return PrintAlgorithms(ranks, hosts);
  if (!knobsOnly) {
    int version = 0;
    strataGetVersion(&version);
    printf("# strata %d.%d.%d\n", version / 10000, version / 100 % 100, version % 100);
    printf("# reduction SIMD path: %s\n", strata::SimdIsaName(strata::HostReduceIsa()));
    printf("# host id: %s\n#\n", strata::HostId().c_str());
    if (!PrintTopology()) return 1;
  }
  PrintKnobs();
  if (!knobsOnly) {
    printf("#\n");
    return PrintAlgorithms(ranks, hosts);
  }
  return 0;
}
