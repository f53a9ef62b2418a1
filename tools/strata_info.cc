// strata-info: what this build and this machine give strata: version, SIMD path, the topology
// (detected, or STRATA_TOPO_FILE), and every config knob with its current value, default and
// description. --topo writes the topology as JSON, the format STRATA_TOPO_FILE reads.
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>

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

}  // namespace

int main(int argc, char** argv) {
  bool knobsOnly = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--knobs")) {
      knobsOnly = true;
    } else if (!strcmp(argv[i], "--topo")) {
      return DumpTopology();
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf(
          "usage: strata-info [--knobs | --topo]\n  prints the version, the reduction SIMD path, the host id, the "
          "topology and every STRATA_* knob\n  --knobs  the knobs alone\n  --topo   the topology as JSON (the "
          "format STRATA_TOPO_FILE reads)\n");
      return 0;
    } else {
      fprintf(stderr, "strata-info: unknown argument '%s' (try --help)\n", argv[i]);
      return 2;
    }
  }
  if (!knobsOnly) {
    int version = 0;
    strataGetVersion(&version);
    printf("# strata %d.%d.%d\n", version / 10000, version / 100 % 100, version % 100);
    printf("# reduction SIMD path: %s\n", strata::SimdIsaName(strata::HostReduceIsa()));
    printf("# host id: %s\n#\n", strata::HostId().c_str());
    if (!PrintTopology()) return 1;
  }
  PrintKnobs();
  return 0;
}
