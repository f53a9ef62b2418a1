// The command line of the perf tools: nccl-tests' flags, defaults and size syntax.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "strata/strata.h"

namespace strata::perf {

enum class TimeReport { kRank0 = 0, kAverage = 1, kMin = 2, kMax = 3 };

struct PerfOptions {
  size_t minBytes = size_t{32} << 20;
  size_t maxBytes = size_t{32} << 20;
  size_t stepBytes = size_t{1} << 20;  // used when stepFactor <= 1, as in nccl-tests
  size_t stepFactor = 1;
  int iters = 20;
  int warmupIters = 5;
  int aggIters = 1;
  int check = 1;  // number of checked runs per measurement; 0: none (#wrong prints N/A)
  std::vector<strataRedOp_t> ops{strataSum};
  std::vector<strataDataType_t> types{strataFloat32};
  int root = 0;
  bool allRoots = false;  // -r all (or -1): every rank in turn, for rooted collectives
  TimeReport report = TimeReport::kAverage;
  int blocking = 0;       // -z: host calls always block; accepted for compatibility
  int graphLaunches = 0;  // -G: no graphs on host memory; accepted and reported as ignored
  int parallelInit = 0;   // -p: accepted, ignored (one rank per process)
  int timeoutSec = 0;     // -T: the communicator's timeout (strataConfig_t.timeoutMs)
  int hugePages = 0;      // -H 1: the buffers asked to be backed by transparent huge pages (madvise)
  int registered = 0;     // -R 1: the buffers from strataMemAlloc (its peers on the host map them)
  std::string jsonPath;   // -J
  std::string algorithm;  // -A: forced algorithm (strataConfig_t.algorithm; STRATA_ALGO's grammar)
  std::string quant;      // -q: quantization spec (STRATA_QUANT's grammar) passed to the Ex entry points
  std::string commandLine;
};

enum class ParseOutcome { kRun, kHelp, kError };

// Fills `opts` from argv; on kError `error` says why.
ParseOutcome ParsePerfOptions(int argc, char** argv, PerfOptions* opts, std::string* error);
void PrintUsage(FILE* out, const char* prog);

// "64", "64K", "1.5M", "2G" (powers of two, as nccl-tests); false on anything else.
bool ParseSize(const char* text, size_t* bytes);

}  // namespace strata::perf
