#include "perf_options.h"

#include <getopt.h>
#include <strings.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "perf_types.h"

namespace strata::perf {
namespace {

bool ParseInt(const char* text, long lo, long hi, int* value) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 0);
  if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) return false;
  *value = static_cast<int>(v);
  return true;
}

std::string JoinArgs(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    if (i) line += ' ';
    line += argv[i];
  }
  return line;
}

const option kLongOptions[] = {
    {"nthreads", required_argument, nullptr, 't'},
    {"ngpus", required_argument, nullptr, 'g'},
    {"minbytes", required_argument, nullptr, 'b'},
    {"maxbytes", required_argument, nullptr, 'e'},
    {"stepbytes", required_argument, nullptr, 'i'},
    {"stepfactor", required_argument, nullptr, 'f'},
    {"iters", required_argument, nullptr, 'n'},
    {"agg_iters", required_argument, nullptr, 'm'},
    {"warmup_iters", required_argument, nullptr, 'w'},
    {"parallel_init", required_argument, nullptr, 'p'},
    {"check", required_argument, nullptr, 'c'},
    {"op", required_argument, nullptr, 'o'},
    {"datatype", required_argument, nullptr, 'd'},
    {"root", required_argument, nullptr, 'r'},
    {"blocking", required_argument, nullptr, 'z'},
    {"stream_null", required_argument, nullptr, 'y'},
    {"timeout", required_argument, nullptr, 'T'},
    {"cudagraph", required_argument, nullptr, 'G'},
    {"report_cputime", required_argument, nullptr, 'C'},
    {"average", required_argument, nullptr, 'a'},
    {"json", required_argument, nullptr, 'J'},
    {"algorithm", required_argument, nullptr, 'A'},
    {"quant", required_argument, nullptr, 'q'},
    {"huge_pages", required_argument, nullptr, 'H'},
    {"registered", required_argument, nullptr, 'R'},
    {"help", no_argument, nullptr, 'h'},
    {nullptr, 0, nullptr, 0},
};
const char kShortOptions[] = ":t:g:b:e:i:f:n:m:w:p:c:o:d:r:z:y:T:G:C:a:J:A:q:H:R:h";

}  // namespace

bool ParseSize(const char* text, size_t* bytes) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text, &end);
  if (errno != 0 || end == text || !(v >= 0)) return false;
  double unit = 1;
  if (*end != '\0') {
    switch (*end) {
      case 'K':
      case 'k':
        unit = 1024.0;
        break;
      case 'M':
      case 'm':
        unit = 1024.0 * 1024;
        break;
      case 'G':
      case 'g':
        unit = 1024.0 * 1024 * 1024;
        break;
      default:
        return false;
    }
    ++end;
    if (*end == 'B' || *end == 'b') ++end;  // "64MB" reads as 64M
    if (*end != '\0') return false;
  }
  const double total = std::floor(v * unit);
  if (total >= 9.0e18) return false;
  *bytes = static_cast<size_t>(total);
  return true;
}

void PrintUsage(FILE* out, const char* prog) {
  std::fprintf(out,
               "USAGE: %s\n"
               "\t[-t,--nthreads <num threads>] (must be 1)\n"
               "\t[-g,--ngpus <gpus per thread>] (must be 1)\n"
               "\t[-b,--minbytes <min size in bytes>] (default 32M; K/M/G suffixes)\n"
               "\t[-e,--maxbytes <max size in bytes>] (default 32M)\n"
               "\t[-i,--stepbytes <increment size>] (default 1M; used when -f is not above 1)\n"
               "\t[-f,--stepfactor <increment factor>] (multiplies the size)\n"
               "\t[-n,--iters <iteration count>] (default 20)\n"
               "\t[-m,--agg_iters <aggregated iteration count>] (default 1; >1 groups them)\n"
               "\t[-w,--warmup_iters <warmup iteration count>] (default 5)\n"
               "\t[-p,--parallel_init <0/1>] (ignored)\n"
               "\t[-c,--check <check iteration count>] (default 1; 0 skips checking)\n"
               "\t[-o,--op <sum/prod/min/max/avg/all>] (default sum)\n"
               "\t[-d,--datatype <int8/uint8/int32/uint32/int64/uint64/half/float/double/bfloat16/f8e4m3/"
               "f8e5m2/all>] (default float)\n"
               "\t[-r,--root <root/all>] (default 0; all or -1 runs every root)\n"
               "\t[-z,--blocking <0/1>] (host calls always block)\n"
               "\t[-y,--stream_null <0/1>] (ignored)\n"
               "\t[-T,--timeout <time in seconds>] (communicator timeout)\n"
               "\t[-G,--cudagraph <num graph launches>] (ignored: host memory)\n"
               "\t[-C,--report_cputime <0/1>] (ignored: host calls block, so cpu time is the time)\n"
               "\t[-a,--average <0/1/2/3> report iteration time <0=RANK0/1=AVG/2=MIN/3=MAX>] (default 1)\n"
               "\t[-J,--json <file>] (rank 0 writes the results as JSON)\n"
               "\t[-A,--algorithm <name>] (force an algorithm: ring, chain, direct, tree, rd, rhd, hier, hier_leader,\n"
               "\t                         pairwise, or collective:name;... as STRATA_ALGO; default: the selector)\n"
               "\t[-q,--quant <spec>] (quantized: int8:128, int4:32, bf16, fp8e4m3:64, ... as STRATA_QUANT;\n"
               "\t                     all_reduce, reduce_scatter, all_gather; adds the error column)\n"
               "\t[-H,--huge_pages <0/1>] (1: back the buffers with transparent huge pages, madvise; default 0)\n"
               "\t[-R,--registered <0/1>] (1: the buffers from strataMemAlloc, which the host's ranks map; default 0)\n"
               "\t[-h,--help]\n",
               prog);
}

ParseOutcome ParsePerfOptions(int argc, char** argv, PerfOptions* opts, std::string* error) {
  opts->commandLine = JoinArgs(argc, argv);
  int nthreads = 1, ngpus = 1, unused = 0, average = 1;
  opterr = 0;  // we print our own messages
  optind = 1;
  for (;;) {
    const int c = getopt_long(argc, argv, kShortOptions, kLongOptions, nullptr);
    if (c == -1) break;
    const char* value = optarg ? optarg : "";  // set for every option that takes one
    const std::string arg = value;
    bool ok = true;
    switch (c) {
      case 't':
        ok = ParseInt(value, 1, 1, &nthreads);
        break;
      case 'g':
        ok = ParseInt(value, 1, 1, &ngpus);
        break;
      case 'b':
        ok = ParseSize(value, &opts->minBytes);
        break;
      case 'e':
        ok = ParseSize(value, &opts->maxBytes);
        break;
      case 'i':
        ok = ParseSize(value, &opts->stepBytes);
        break;
      case 'f': {
        int f = 0;
        ok = ParseInt(value, 1, 1 << 20, &f);
        opts->stepFactor = static_cast<size_t>(f);
        break;
      }
      case 'n':
        ok = ParseInt(value, 1, 1 << 30, &opts->iters);
        break;
      case 'm':
        ok = ParseInt(value, 1, 1 << 20, &opts->aggIters);
        break;
      case 'w':
        ok = ParseInt(value, 0, 1 << 30, &opts->warmupIters);
        break;
      case 'p':
        ok = ParseInt(value, 0, 1, &opts->parallelInit);
        break;
      case 'c':
        ok = ParseInt(value, 0, 1 << 20, &opts->check);
        break;
      case 'H':
        ok = ParseInt(value, 0, 1, &opts->hugePages);
        break;
      case 'R':
        ok = ParseInt(value, 0, 1, &opts->registered);
        break;
      case 'o': {
        strataRedOp_t op;
        if (strcasecmp(value, "all") == 0) {
          size_t n;
          const strataRedOp_t* all = AllOps(&n);
          opts->ops.assign(all, all + n);
        } else if ((ok = ParseOpName(arg, &op))) {
          opts->ops = {op};
        }
        break;
      }
      case 'd': {
        strataDataType_t type;
        if (strcasecmp(value, "all") == 0) {
          size_t n;
          const TypeDesc* all = AllTypes(&n);
          opts->types.clear();
          for (size_t i = 0; i < n; ++i) opts->types.push_back(all[i].type);
        } else if ((ok = ParseTypeName(arg, &type))) {
          opts->types = {type};
        }
        break;
      }
      case 'r':
        if (strcasecmp(value, "all") == 0) {
          opts->allRoots = true;
        } else if ((ok = ParseInt(value, -1, 1 << 30, &opts->root))) {
          opts->allRoots = opts->root == -1;  // nccl-tests: -1 runs every root
          if (opts->allRoots) opts->root = 0;
        }
        break;
      case 'z':
        ok = ParseInt(value, 0, 1, &opts->blocking);
        break;
      case 'y':
      case 'C':
        ok = ParseInt(value, 0, 1, &unused);
        break;
      case 'T':
        ok = ParseInt(value, 0, 1 << 21, &opts->timeoutSec);  // ms must fit in an int
        break;
      case 'G':
        ok = ParseInt(value, 0, 1 << 30, &opts->graphLaunches);
        break;
      case 'a':
        ok = ParseInt(value, 0, 3, &average);
        opts->report = static_cast<TimeReport>(average);
        break;
      case 'J':
        ok = !arg.empty();
        opts->jsonPath = arg;
        break;
      case 'A':
        ok = !arg.empty();  // the communicator checks the name and says what it accepts
        opts->algorithm = arg;
        break;
      case 'q': {
        strataQuantOptions_t q = STRATA_QUANT_OPTIONS_INITIALIZER;
        if (strataQuantOptionsParse(arg.c_str(), &q) != strataSuccess) {
          *error = "invalid value '" + arg + "' for -q: " + strataGetLastError(nullptr);
          return ParseOutcome::kError;
        }
        opts->quant = arg;
        break;
      }
      case 'h':
        return ParseOutcome::kHelp;
      case ':':
        *error = std::string("option '") + argv[optind - 1] + "' needs a value";
        return ParseOutcome::kError;
      default:
        *error = std::string("invalid option '") + argv[optind - 1] + "'";
        return ParseOutcome::kError;
    }
    if (!ok) {
      *error = std::string("invalid value '") + arg + "' for -" + static_cast<char>(c);
      if (c == 't' || c == 'g') *error += " (one rank per process: -t and -g must be 1)";
      return ParseOutcome::kError;
    }
  }
  if (optind < argc) {
    *error = std::string("unexpected argument '") + argv[optind] + "'";
    return ParseOutcome::kError;
  }
  if (opts->minBytes > opts->maxBytes) {
    *error =
        "minbytes " + std::to_string(opts->minBytes) + " is larger than maxbytes " + std::to_string(opts->maxBytes);
    return ParseOutcome::kError;
  }
  if (opts->stepFactor <= 1 && opts->stepBytes == 0 && opts->minBytes < opts->maxBytes) {
    *error = "stepbytes must be above 0 (or give -f)";
    return ParseOutcome::kError;
  }
  return ParseOutcome::kRun;
}

}  // namespace strata::perf
