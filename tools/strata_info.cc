// strata-info: what this build and this machine give strata: version, SIMD path, and every config
// knob with its current value, default and description.
#include <cstdio>
#include <cstring>

#include "core/communicator.h"
#include "core/config.h"
#include "exec/host_reduce.h"
#include "strata/strata.h"

namespace {

void PrintKnobs() {
  printf("# Config knobs (environment; '*' marks a value set here)\n");
  for (const strata::KnobInfo& k : strata::AllKnobs()) {
    const bool set = strata::ConfigIsSet(k.name);
    printf("%c %-24s = %-12s (default %s)\n      %s\n", set ? '*' : ' ', k.name, strata::ConfigString(k.name).c_str(),
           k.defaultValue[0] ? k.defaultValue : "\"\"", k.description);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool knobsOnly = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--knobs")) {
      knobsOnly = true;
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      printf("usage: strata-info [--knobs]\n  prints the version, the reduction SIMD path, the host id and every "
             "STRATA_* knob\n");
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
  }
  PrintKnobs();
  return 0;
}
