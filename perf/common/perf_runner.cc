// The sweep every perf tool runs: communicator from the launcher's environment, buffers, then for each
// (type, op, root, size) an out-of-place and an in-place measurement, each timed and then checked.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collective_bench.h"
#include "input_model.h"
#include "perf_options.h"
#include "perf_report.h"
#include "perf_types.h"
#include "result_check.h"
#include "strata_call.h"

namespace strata::perf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kAlign = 64;
constexpr size_t kHugePage = size_t{2} << 20;  // x86-64's transparent huge page

size_t RoundUp(size_t v, size_t a) { return (v + a - 1) / a * a; }

struct FreeDeleter {
  bool registered = false;  // from strataMemAlloc
  void operator()(char* p) const {
    if (registered)
      (void)strataMemFree(p);
    else
      std::free(p);
  }
};
using HostBuffer = std::unique_ptr<char, FreeDeleter>;

// Fixed size, so every rank's record travels in one AllGather.
struct HostRecord {
  int32_t pid;
  char hostname[60];
};

// One (type, op, root) combination of the sweep.
struct SweepPoint {
  const TypeDesc* type;
  strataRedOp_t op;
  const char* opName;
  int root;
};

// Where one call reads and writes. `base`/`regionBytes` span everything it may touch in the receive buffer
// (in-place: the send part too).
struct CallBuffers {
  char* base;
  size_t regionBytes;
  char* send;
  char* recv;
};

class PerfSession {
 public:
  PerfSession(const CollectiveBench& bench, const PerfOptions& opts) : bench_(bench), opts_(opts) {}
  int Run();

 private:
  void InitComm();
  void PrintPreamble();
  void AllocateBuffers();
  void RunSweepPoint(const SweepPoint& point);
  PassResult Measure(const SweepPoint& point, const BufferShape& shape, size_t bytes, bool inPlace);
  // Elements beyond the bound; for quantized runs also the squared errors (QuantCheck).
  QuantCheck CheckOnce(const SweepPoint& point, const BufferShape& shape, bool inPlace, uint64_t seed);
  InputPattern PatternOf(const SweepPoint& point) const {
    return quantized_ ? InputPattern::kGauss : PatternFor(bench_.reduces(), point.op);
  }
  // -q: the spec, and whether every swept type and op can take it; prints why not.
  bool SetUpQuant();
  CallBuffers BuffersFor(const SweepPoint& point, const BufferShape& shape, bool inPlace, size_t iteration) const;
  void RunOne(const SweepPoint& point, const BufferShape& shape, const CallBuffers& b) const;
  double ReportedSeconds(double mine);
  template <typename T>
  std::vector<T> Gather(const T& mine);
  bool IsPrinter() const { return rank_ == 0; }

  const CollectiveBench& bench_;
  const PerfOptions& opts_;
  strataComm_t comm_ = nullptr;
  int rank_ = 0;
  int nranks_ = 1;
  HostBuffer send_;
  HostBuffer recv_;
  size_t bufferBytes_ = 0;
  uint64_t nextSeed_ = 1;  // the same sequence on every rank, so all regenerate the same inputs
  RunSummary summary_;
  double busBwSum_ = 0;
  int busBwCount_ = 0;
  std::string measuredAlgorithm_;  // of the last timed loop
  bool quantized_ = false;          // -q with a spec other than none
  strataQuantOptions_t quant_ = STRATA_QUANT_OPTIONS_INITIALIZER;
};

// The harness's own exchanges use AllGather of bytes only, so that timing and error counts do not depend
// on the reduction paths under test.
template <typename T>
std::vector<T> PerfSession::Gather(const T& mine) {
  static_assert(std::is_trivially_copyable<T>::value, "gathered as bytes");
  std::vector<T> all(static_cast<size_t>(nranks_));
  PERF_STRATA_CHECK(comm_, strataAllGather(&mine, all.data(), sizeof(T), strataUint8, comm_, nullptr));
  return all;
}

void PerfSession::InitComm() {
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  strataConfig_t* configArg = nullptr;
  if (opts_.timeoutSec > 0) {
    config.timeoutMs = opts_.timeoutSec * 1000;
    configArg = &config;
  }
  if (!opts_.algorithm.empty()) {
    config.algorithm = opts_.algorithm.c_str();
    configArg = &config;
  }
  PERF_STRATA_CHECK(nullptr, strataCommInitFromEnv(&comm_, configArg));
  PERF_STRATA_CHECK(comm_, strataCommCount(comm_, &nranks_));
  PERF_STRATA_CHECK(comm_, strataCommUserRank(comm_, &rank_));
}

void PerfSession::PrintPreamble() {
  HostRecord me{};
  me.pid = static_cast<int32_t>(getpid());
  if (gethostname(me.hostname, sizeof me.hostname - 1) != 0) std::snprintf(me.hostname, sizeof me.hostname, "?");
  const std::vector<HostRecord> all = Gather(me);
  if (!IsPrinter()) return;

  const bool factor = opts_.stepFactor > 1;
  std::printf(
      "# nThread 1 nGpus 1 minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
      "validation: %d graph: 0\n",
      opts_.minBytes, opts_.maxBytes, factor ? opts_.stepFactor : opts_.stepBytes, factor ? "factor" : "bytes",
      opts_.warmupIters, opts_.iters, opts_.aggIters, opts_.check);
  if (opts_.blocking) std::printf("# Blocking Enabled: wait for completion and barrier after each collective \n");
  if (opts_.graphLaunches)
    std::printf("# Graph launches (-G %d) ignored: buffers are host memory\n", opts_.graphLaunches);
  std::printf("#\n# Using devices\n");
  for (size_t r = 0; r < all.size(); ++r) {
    // The device number is the rank's index among the ranks of its host, as a local rank would be.
    int local = 0;
    for (size_t q = 0; q < r; ++q) local += std::strncmp(all[q].hostname, all[r].hostname, sizeof all[r].hostname) == 0;
    std::printf("#  Rank %2zu Group %2d Pid %6d on %10.*s device %2d [cpu] host memory\n", r, 0, all[r].pid,
                static_cast<int>(sizeof all[r].hostname), all[r].hostname, local);
  }
  std::printf("#\n");
  std::fflush(stdout);
}

void PerfSession::AllocateBuffers() {
  // Every call's region is at most the size column, itself at most maxBytes; timed iterations rotate
  // through the spare room, as nccl-tests does, so that consecutive calls do not reuse warm cache lines.
  // -H 1: huge-page aligned and advised, before the pages are first touched (the kernel backs them with 2 MiB pages
  // where transparent huge pages are "madvise" or "always").
  const size_t align = opts_.hugePages ? kHugePage : kAlign;
  bufferBytes_ = RoundUp(std::max<size_t>(opts_.maxBytes, 1), align);
  for (HostBuffer* buf : {&send_, &recv_}) {
    void* p = nullptr;
    if (opts_.registered) {  // -R 1: page aligned, shared with the host's other ranks
      const strataResult_t res = strataMemAlloc(&p, bufferBytes_);
      if (res != strataSuccess) {
        std::fprintf(stderr, "rank %d: strataMemAlloc(%zu bytes) failed: %s\n", rank_, bufferBytes_,
                     strataGetLastError(nullptr));
        std::exit(1);
      }
    } else if (posix_memalign(&p, align, bufferBytes_) != 0) {
      std::fprintf(stderr, "rank %d: cannot allocate %zu bytes of host memory (lower -e)\n", rank_, bufferBytes_);
      std::exit(1);
    }
    if (opts_.hugePages && madvise(p, bufferBytes_, MADV_HUGEPAGE) != 0 && rank_ == 0)
      std::fprintf(stderr, "-H 1: madvise(MADV_HUGEPAGE) failed (%s); the buffers use ordinary pages\n",
                   std::strerror(errno));
    std::memset(p, 0, bufferBytes_);  // fault the pages in before anything is timed
    *buf = HostBuffer(static_cast<char*>(p), FreeDeleter{opts_.registered != 0});
  }
}

CallBuffers PerfSession::BuffersFor(const SweepPoint& point, const BufferShape& shape, bool inPlace,
                                    size_t iteration) const {
  const size_t ts = point.type->size;
  const size_t regionBytes = std::max(shape.sendCount, shape.recvCount) * ts;
  const size_t slotBytes = RoundUp(regionBytes, kAlign);
  const size_t slots = slotBytes ? std::max<size_t>(1, bufferBytes_ / slotBytes) : 1;
  const size_t offset = (iteration % slots) * slotBytes;
  CallBuffers b{recv_.get() + offset, regionBytes, send_.get() + offset, recv_.get() + offset};
  if (inPlace && bench_.hasInPlace()) {
    b.send = b.base + shape.sendInPlaceOffset * static_cast<size_t>(rank_) * ts;
    b.recv = b.base + shape.recvInPlaceOffset * static_cast<size_t>(rank_) * ts;
  }
  return b;
}

void PerfSession::RunOne(const SweepPoint& point, const BufferShape& shape, const CallBuffers& b) const {
  bench_.run(CallArgs{b.send, b.recv, shape.count, point.type->type, point.op, point.root, comm_, rank_, nranks_,
                      quantized_ ? &quant_ : nullptr});
}

bool PerfSession::SetUpQuant() {
  if (opts_.quant.empty()) return true;
  if (strataQuantOptionsParse(opts_.quant.c_str(), &quant_) != strataSuccess) {  // checked by the parser already
    if (IsPrinter()) std::fprintf(stderr, "-q %s: %s\n", opts_.quant.c_str(), strataGetLastError(nullptr));
    return false;
  }
  quantized_ = quant_.format != strataQuantNone;
  if (!quantized_) return true;
  std::string why;
  if (!bench_.quantizable()) why = std::string(bench_.name()) + " has no quantized form (all_reduce, reduce_scatter, all_gather have)";
  for (strataDataType_t t : opts_.types)
    if (why.empty() && t != strataFloat32 && t != strataFloat16 && t != strataBfloat16)
      why = std::string("datatype ") + GetTypeDesc(t).name + " cannot be quantized (float, half, bfloat16 can)";
  for (strataRedOp_t op : opts_.ops)
    if (why.empty() && bench_.reduces() && op != strataSum && op != strataAvg)
      why = std::string("op ") + OpName(op) + " cannot be quantized (sum, avg can)";
  if (!why.empty() && IsPrinter()) {
    std::fprintf(stderr, "-q %s: %s\n", opts_.quant.c_str(), why.c_str());
    std::fflush(stderr);
  }
  return why.empty();
}

double PerfSession::ReportedSeconds(double mine) {
  const std::vector<double> all = Gather(mine);
  switch (opts_.report) {
    case TimeReport::kRank0:
      return all[0];
    case TimeReport::kMin:
      return *std::min_element(all.begin(), all.end());
    case TimeReport::kMax:
      return *std::max_element(all.begin(), all.end());
    case TimeReport::kAverage:
      break;
  }
  double sum = 0;
  for (double t : all) sum += t;
  return sum / static_cast<double>(all.size());
}

QuantCheck PerfSession::CheckOnce(const SweepPoint& point, const BufferShape& shape, bool inPlace, uint64_t seed) {
  const TypeDesc& t = *point.type;
  const InputModel model(t, PatternOf(point), nranks_, seed);
  const CallBuffers b = BuffersFor(point, shape, inPlace, 0);
  const bool realInPlace = inPlace && bench_.hasInPlace();
  const bool hasInput = bench_.hasInput(rank_, point.root);
  // Poison what the call may write (NaN for float types; for integers a byte outside every input range),
  // then lay the input over it: an element the library forgets to write cannot pass by luck.
  const int poison = t.cls == TypeClass::kFloat ? 0xFF : 0x7B;
  if (realInPlace) {
    std::memset(b.base, poison, b.regionBytes);
  } else {
    std::memset(b.recv, poison, shape.recvCount * t.size);
  }
  if (hasInput) model.Fill(b.send, shape.sendCount, rank_);

  RunOne(point, shape, b);

  const OutputPlace place{rank_, nranks_, point.root, shape.count};
  auto source = [&](size_t i) { return bench_.expected(place, i); };
  QuantCheck c;
  if (quantized_) {
    c = CheckQuantizedElements(model, point.op, b.recv, shape.recvCount, source, QuantUnitError(quant_),
                               GaussPatternMaxAbs());
  } else {
    c.wrong = CountWrongElements(model, point.op, b.recv, shape.recvCount, source);
  }
  // An out-of-place call must leave its input alone.
  if (!realInPlace && hasInput) c.wrong += model.CountChangedInputs(b.send, shape.sendCount, rank_);
  return c;
}

PassResult PerfSession::Measure(const SweepPoint& point, const BufferShape& shape, size_t bytes, bool inPlace) {
  if (opts_.check > 0 && bench_.hasInput(rank_, point.root)) {
    // Time on the kind of data that is checked (the check refills it after the timed loop anyway).
    const InputModel model(*point.type, PatternOf(point), nranks_, nextSeed_);
    model.Fill(BuffersFor(point, shape, inPlace, 0).send, shape.sendCount, rank_);
  }
  const bool barrierEach = opts_.blocking != 0;
  PERF_STRATA_CHECK(comm_, strataBarrier(comm_));
  for (int i = 0; i < opts_.warmupIters; ++i) {
    RunOne(point, shape, BuffersFor(point, shape, inPlace, static_cast<size_t>(i)));
    if (barrierEach) PERF_STRATA_CHECK(comm_, strataBarrier(comm_));
  }
  PERF_STRATA_CHECK(comm_, strataBarrier(comm_));

  const bool grouped = opts_.aggIters > 1;
  const Clock::time_point start = Clock::now();
  for (int it = 0; it < opts_.iters; ++it) {
    if (grouped) PERF_STRATA_CHECK(comm_, strataGroupStart());
    for (int a = 0; a < opts_.aggIters; ++a) {
      const size_t iteration = static_cast<size_t>(it) * static_cast<size_t>(opts_.aggIters) + static_cast<size_t>(a);
      RunOne(point, shape, BuffersFor(point, shape, inPlace, iteration));
      if (barrierEach && !grouped) PERF_STRATA_CHECK(comm_, strataBarrier(comm_));
    }
    if (grouped) PERF_STRATA_CHECK(comm_, strataGroupEnd());
    if (barrierEach && grouped) PERF_STRATA_CHECK(comm_, strataBarrier(comm_));
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  // Before any exchange of the harness's own: those run collectives too.
  const char* algo = nullptr;
  measuredAlgorithm_ = strataCommGetLastAlgorithm(comm_, &algo) == strataSuccess && algo ? algo : "";
  const double seconds = ReportedSeconds(elapsed / (static_cast<double>(opts_.iters) * opts_.aggIters));

  PassResult r;
  r.timeUs = seconds * 1e6;
  r.algBw = seconds > 0 ? static_cast<double>(bytes) / 1.0e9 / seconds : 0.0;
  r.busBw = r.algBw * bench_.busBwFactor(nranks_);
  if (opts_.check > 0) {
    r.wrong = 0;
    double errSq = 0, refSq = 0;
    for (int c = 0; c < opts_.check && r.wrong == 0; ++c) {
      const QuantCheck mine = CheckOnce(point, shape, inPlace, nextSeed_++);
      for (const QuantCheck& q : Gather(mine)) {
        r.wrong += q.wrong;
        errSq += q.errSq;
        refSq += q.refSq;
      }
    }
    if (quantized_) r.error = refSq > 0 ? std::sqrt(errSq / refSq) : std::sqrt(errSq);
  }
  return r;
}

void PerfSession::RunSweepPoint(const SweepPoint& point) {
  const size_t ts = point.type->size;
  const size_t divisor = bench_.sizeDivisor(nranks_);
  for (size_t size = opts_.minBytes; size <= opts_.maxBytes;) {
    const size_t elements = size / (ts * divisor) * divisor;
    const BufferShape shape = bench_.shape(elements, nranks_);
    ResultRow row;
    row.bytes = elements * ts;
    row.count = shape.count;
    row.type = point.type->name;
    row.op = point.opName;
    row.root = point.root;
    if (IsPrinter()) PrintRowStart(stdout, row);
    row.outOfPlace = Measure(point, shape, row.bytes, false);
    row.algorithm = measuredAlgorithm_;
    if (IsPrinter()) PrintPass(stdout, row.outOfPlace, quantized_);
    row.inPlace = Measure(point, shape, row.bytes, true);
    if (IsPrinter()) {
      PrintPass(stdout, row.inPlace, quantized_);
      PrintRowEnd(stdout, row.algorithm);
    }
    for (const PassResult* p : {&row.outOfPlace, &row.inPlace}) {
      busBwSum_ += p->busBw;
      ++busBwCount_;
      summary_.failedChecks += p->wrong > 0;
    }
    summary_.rows.push_back(row);

    size_t next;
    if (opts_.stepFactor > 1) {
      if (size > SIZE_MAX / opts_.stepFactor) break;
      next = size == 0 ? 1 : size * opts_.stepFactor;  // 0 times a factor would never grow
    } else {
      if (size > SIZE_MAX - opts_.stepBytes) break;
      next = size + opts_.stepBytes;
    }
    if (next <= size) break;
    size = next;
  }
}

int PerfSession::Run() {
  InitComm();
  summary_.commandLine = opts_.commandLine;
  summary_.collective = bench_.name();
  summary_.nranks = nranks_;
  // Refusals every rank comes to alike: rank 0 says why, and the barrier keeps every rank alive until it has
  // (the launcher stops the job at the first rank that exits with an error).
  const bool badRoot = bench_.rooted() && !opts_.allRoots && opts_.root >= nranks_;
  if (badRoot && IsPrinter()) {
    std::fprintf(stderr, "root %d is not a rank (%d ranks)\n", opts_.root, nranks_);
    std::fflush(stderr);
  }
  if (badRoot || !SetUpQuant()) {
    PERF_STRATA_CHECK(comm_, strataBarrier(comm_));
    PERF_STRATA_CHECK(nullptr, strataCommDestroy(comm_));
    return 1;
  }
  PrintPreamble();
  if (quantized_ && IsPrinter()) {
    std::printf("# Quantized: %s (error: relative L2 error against a float64 reduction; #wrong: elements beyond the "
                "spec's worst case)\n#\n", opts_.quant.c_str());
  }
  AllocateBuffers();
  if (IsPrinter()) PrintTableHeader(stdout, quantized_);

  std::vector<int> roots;
  if (!bench_.rooted()) {
    roots.push_back(-1);
  } else if (opts_.allRoots) {
    for (int r = 0; r < nranks_; ++r) roots.push_back(r);
  } else {
    roots.push_back(opts_.root);
  }
  std::vector<std::pair<strataRedOp_t, const char*>> ops;
  if (bench_.reduces()) {
    for (const strataRedOp_t op : opts_.ops) ops.emplace_back(op, OpName(op));
  } else {
    ops.emplace_back(strataSum, "none");
  }
  for (const strataDataType_t type : opts_.types) {
    for (const auto& op : ops) {
      for (const int root : roots) RunSweepPoint(SweepPoint{&GetTypeDesc(type), op.first, op.second, root});
    }
  }

  summary_.avgBusBw = busBwCount_ ? busBwSum_ / busBwCount_ : 0.0;
  int status = summary_.failedChecks ? 1 : 0;
  if (IsPrinter()) {
    PrintFooter(stdout, summary_.failedChecks, summary_.avgBusBw);
    if (!opts_.jsonPath.empty() && !WriteJson(opts_.jsonPath, summary_)) {
      std::fprintf(stderr, "cannot write %s: %s\n", opts_.jsonPath.c_str(), std::strerror(errno));
      status = 1;
    }
  }
  PERF_STRATA_CHECK(nullptr, strataCommDestroy(comm_));
  comm_ = nullptr;
  return status;
}

}  // namespace

int RunCollectiveBench(int argc, char** argv, const CollectiveBench& bench) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  const char* prog = argc > 0 ? argv[0] : "perf";
  if (const char* slash = std::strrchr(prog, '/')) prog = slash + 1;
  PerfOptions opts;
  std::string error;
  switch (ParsePerfOptions(argc, argv, &opts, &error)) {
    case ParseOutcome::kHelp:
      PrintUsage(stdout, prog);
      return 0;
    case ParseOutcome::kError:
      std::fprintf(stderr, "%s: %s (-h lists the flags)\n", prog, error.c_str());
      return 1;
    case ParseOutcome::kRun:
      break;
  }
  PerfSession session(bench, opts);
  return session.Run();
}

}  // namespace strata::perf
