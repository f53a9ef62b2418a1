// strata_soak: random collectives for a given time, every result checked, resident memory watched.
// Every rank draws the same sequence of calls (collective, element count, datatype, op, root, in place
// or not, and the algorithm: a communicator per forced algorithm, plus the selector's) from one seed; inputs come from the perf tools' InputModel, so each rank computes the expected
// output itself, independent of the library. Run it under a launcher:
//   stratarun -n 4 build/bin/strata_soak --seconds 600
// Exit status: 0 when no result was wrong and resident memory grew less than --max-rss-growth percent
// after the warm-up; 1 otherwise; 2 when a call failed.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/input_model.h"
#include "common/perf_types.h"
#include "common/result_check.h"
#include "strata/strata.h"

namespace strata::perf {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  double seconds = 60;
  double warmupSeconds = -1;  // default: a tenth of the run, at most 60 s
  double reportSeconds = 30;
  uint64_t seed = 1;
  size_t maxBytes = 1 << 20;  // per rank and buffer
  double maxRssGrowthPct = 5;
  // "auto" is the selector; any other name is forced (a communicator split off with config.algorithm).
  std::string algos = "auto,ring,chain,direct,tree,rd,rhd,oneshot,twoshot,hier,hier_leader,pairwise";
};

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "-h" || a == "--help" || !v) return false;
    ++i;
    if (a == "--seconds") o->seconds = atof(v);
    else if (a == "--warmup") o->warmupSeconds = atof(v);
    else if (a == "--report") o->reportSeconds = atof(v);
    else if (a == "--seed") o->seed = strtoull(v, nullptr, 10);
    else if (a == "--max-bytes") o->maxBytes = strtoull(v, nullptr, 10);
    else if (a == "--max-rss-growth") o->maxRssGrowthPct = atof(v);
    else if (a == "--algos") o->algos = v;
    else return false;
  }
  if (o->warmupSeconds < 0) o->warmupSeconds = std::min(60.0, o->seconds / 10);
  return o->seconds > 0 && o->maxBytes >= 64;
}

int64_t ResidentBytes() {
  FILE* f = fopen("/proc/self/statm", "r");
  long pages = 0, resident = 0;
  if (f) {
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    fclose(f);
  }
  return static_cast<int64_t>(resident) * sysconf(_SC_PAGESIZE);
}

enum class Coll { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, kCount };
const char* CollName(Coll c) {
  static const char* const kNames[] = {"AllReduce", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AlltoAll"};
  return kNames[static_cast<int>(c)];
}

// One random call, the same on every rank.
struct Call {
  Coll coll;
  const TypeDesc* type;
  strataRedOp_t op;
  int root;
  size_t count;  // the API's count argument
  bool inPlace;
};

Call Draw(std::mt19937_64& rng, int nranks, size_t maxBytes) {
  size_t ntypes = 0, nops = 0;
  const TypeDesc* types = AllTypes(&ntypes);
  const strataRedOp_t* ops = AllOps(&nops);
  Call c;
  c.coll = static_cast<Coll>(rng() % static_cast<int>(Coll::kCount));
  c.type = &types[rng() % ntypes];
  const bool reduces = c.coll == Coll::AllReduce || c.coll == Coll::Reduce || c.coll == Coll::ReduceScatter;
  c.op = reduces ? ops[rng() % nops] : strataSum;
  c.root = (c.coll == Coll::Broadcast || c.coll == Coll::Reduce) ? static_cast<int>(rng() % nranks) : 0;
  // Sizes spread evenly over powers of two, odd counts and zero included.
  const bool perRankBlocks = c.coll == Coll::AllGather || c.coll == Coll::ReduceScatter || c.coll == Coll::AlltoAll;
  const size_t maxElems = maxBytes / c.type->size / (perRankBlocks ? nranks : 1);
  int bits = 0;
  while ((2ull << bits) <= maxElems) ++bits;
  const size_t span = 1ull << (rng() % (bits + 1));
  c.count = rng() % 50 == 0 ? 0 : std::min<size_t>(maxElems, span + rng() % span);
  c.inPlace = c.coll != Coll::AlltoAll && rng() % 3 == 0;
  return c;
}

class Soak {
 public:
  Soak(int rank, int nranks, const Options& o)
      : rank_(rank), n_(nranks), o_(o), send_(o.maxBytes + 64), recv_(o.maxBytes + 64) {}

  // Runs one call on `comm` and returns how many output elements are wrong; -1 when the call failed.
  int64_t run(const Call& c, uint64_t seed, strataComm_t comm) {
    comm_ = comm;
    const TypeDesc& t = *c.type;
    const bool reduces = c.coll == Coll::AllReduce || c.coll == Coll::Reduce || c.coll == Coll::ReduceScatter;
    const InputModel model(t, PatternFor(reduces, c.op), n_, seed);
    const size_t cnt = c.count, es = t.size;
    char* s = send_.data();
    char* r = recv_.data();
    // Poison every byte the call may write, so a forgotten element cannot pass by luck.
    memset(r, t.cls == TypeClass::kFloat ? 0xFF : 0x7B, recv_.size());
    const char* in = s;
    char* out = r;
    size_t outCount = cnt;
    std::function<ElementSource(size_t)> src;
    strataResult_t rc = strataSuccess;
    switch (c.coll) {
      case Coll::AllReduce:
        if (c.inPlace) in = r;
        model.Fill(const_cast<char*>(in), cnt, rank_);
        rc = strataAllReduce(in, out, cnt, t.type, c.op, comm_, nullptr);
        src = [](size_t i) { return ElementSource::Reduce(i); };
        break;
      case Coll::Broadcast:
        if (c.inPlace) in = r;
        if (rank_ == c.root) model.Fill(const_cast<char*>(in), cnt, rank_);
        rc = strataBroadcast(in, out, cnt, t.type, c.root, comm_, nullptr);
        src = [&c](size_t i) { return ElementSource::Copy(c.root, i); };
        break;
      case Coll::Reduce:
        if (c.inPlace) in = r;
        model.Fill(const_cast<char*>(in), cnt, rank_);
        rc = strataReduce(in, out, cnt, t.type, c.op, c.root, comm_, nullptr);
        if (rank_ != c.root) outCount = 0;  // only the root's output is defined
        src = [](size_t i) { return ElementSource::Reduce(i); };
        break;
      case Coll::AllGather:
        if (c.inPlace) in = r + rank_ * cnt * es;
        model.Fill(const_cast<char*>(in), cnt, rank_);
        rc = strataAllGather(in, out, cnt, t.type, comm_, nullptr);
        outCount = cnt * n_;
        src = [cnt](size_t i) { return ElementSource::Copy(static_cast<int>(i / cnt), i % cnt); };
        break;
      case Coll::ReduceScatter: {
        if (c.inPlace) {
          in = r;
          out = r + rank_ * cnt * es;
        }
        model.Fill(const_cast<char*>(in), cnt * n_, rank_);
        rc = strataReduceScatter(in, out, cnt, t.type, c.op, comm_, nullptr);
        const size_t base = rank_ * cnt;
        src = [base](size_t i) { return ElementSource::Reduce(base + i); };
        break;
      }
      case Coll::AlltoAll: {
        model.Fill(const_cast<char*>(in), cnt * n_, rank_);
        rc = strataAlltoAll(in, out, cnt, t.type, comm_, nullptr);
        outCount = cnt * n_;
        const size_t mine = rank_ * cnt;
        src = [cnt, mine](size_t i) { return ElementSource::Copy(static_cast<int>(i / cnt), mine + i % cnt); };
        break;
      }
      default:
        break;
    }
    if (rc != strataSuccess) {
      fprintf(stderr, "rank %d: %s failed: %s: %s\n", rank_, CollName(c.coll), strataGetErrorString(rc),
              strataGetLastError(comm_));
      return -1;
    }
    if (outCount == 0) return 0;
    return CountWrongElements(model, c.op, out, outCount, src);
  }

 private:
  strataComm_t comm_ = nullptr;
  int rank_, n_;
  Options o_;
  std::vector<char> send_, recv_;
};

int Main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) {
    fprintf(stderr,
            "usage: strata_soak [--seconds S] [--warmup S] [--report S] [--seed N] [--max-bytes B] "
            "[--max-rss-growth PCT] [--algos auto,ring,...]\n");
    return 2;
  }
  strataComm_t comm = nullptr;
  if (strataCommInitFromEnv(&comm, nullptr) != strataSuccess) {
    fprintf(stderr, "strata_soak: init failed: %s\n", strataGetLastError(nullptr));
    return 2;
  }
  int rank = 0, n = 1;
  (void)strataCommUserRank(comm, &rank);
  (void)strataCommCount(comm, &n);
  // One communicator per algorithm: the base one runs the selector's choice ("auto").
  std::vector<std::string> algoNames;
  std::vector<strataComm_t> comms;
  for (size_t pos = 0; pos <= o.algos.size();) {
    const size_t comma = std::min(o.algos.find(',', pos), o.algos.size());
    const std::string name = o.algos.substr(pos, comma - pos);
    pos = comma + 1;
    if (name.empty()) continue;
    if (name == "auto") {
      algoNames.push_back(name);
      comms.push_back(comm);
      continue;
    }
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.algorithm = name.c_str();
    strataComm_t forced = nullptr;
    if (strataCommSplit(comm, 0, rank, &forced, &cfg) != strataSuccess) {
      // Every rank fails the same way (the spec is checked before any exchange), so all skip it.
      if (rank == 0) fprintf(stderr, "strata_soak: skipping algorithm %s: %s\n", name.c_str(), strataGetLastError(nullptr));
      continue;
    }
    algoNames.push_back(name);
    comms.push_back(forced);
  }
  if (comms.empty()) {
    fprintf(stderr, "strata_soak: no algorithm to run\n");
    return 2;
  }
  Soak soak(rank, n, o);
  std::mt19937_64 rng(o.seed);
  const Clock::time_point start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::map<std::string, int64_t> calls, ran;
  int64_t iters = 0, wrong = 0, bytes = 0, rssBase = -1, rssPeakAfter = 0;
  double nextReport = o.reportSeconds;
  int status = 0;
  bool stop = false;
  while (!stop) {
    const Call c = Draw(rng, n, o.maxBytes);
    const size_t a = rng() % comms.size();
    const int64_t w = soak.run(c, o.seed * 1000003 + iters, comms[a]);
    if (w < 0) {
      status = 2;
      break;
    }
    if (w > 0 && wrong < 1000)
      fprintf(stderr, "rank %d: call %lld %s of %zu x %s (%s, root %d%s, %s): %lld wrong element(s)\n", rank,
              static_cast<long long>(iters), CollName(c.coll), c.count, c.type->name, OpName(c.op), c.root,
              c.inPlace ? ", in place" : "", algoNames[a].c_str(), static_cast<long long>(w));
    wrong += w;
    ++iters;
    ++calls[CollName(c.coll)];
    const char* algo = nullptr;
    if (strataCommGetLastAlgorithm(comms[a], &algo) == strataSuccess && algo) ++ran[algo[0] ? algo : "(none)"];
    bytes += static_cast<int64_t>(c.count * c.type->size);
    // Every 16 calls the ranks agree on whether time is up (rank 0's clock decides) and report.
    if (iters % 16 != 0) continue;
    int32_t flags[2] = {elapsed() >= o.seconds ? 1 : 0, elapsed() >= nextReport ? 1 : 0};
    if (strataBroadcast(flags, flags, 2, strataInt32, 0, comm, nullptr) != strataSuccess) {
      fprintf(stderr, "rank %d: broadcast of the schedule failed: %s\n", rank, strataGetLastError(comm));
      status = 2;
      break;
    }
    stop = flags[0] != 0;
    const int64_t rss = ResidentBytes();
    if (rssBase < 0 && elapsed() >= o.warmupSeconds) rssBase = rss;
    if (rssBase >= 0) rssPeakAfter = std::max(rssPeakAfter, rss);
    if (flags[1] || stop) {
      nextReport += o.reportSeconds;
      int64_t mine[2] = {rss, wrong}, all[64 * 2] = {};
      if (n <= 64 && strataAllGather(mine, all, 2, strataInt64, comm, nullptr) == strataSuccess && rank == 0) {
        int64_t rssMax = 0, wrongAll = 0;
        for (int q = 0; q < n; ++q) rssMax = std::max(rssMax, all[2 * q]), wrongAll += all[2 * q + 1];
        printf("[%6.0f s] %lld calls, %.2f GB moved per rank, %lld wrong on all ranks, max RSS %.1f MiB\n", elapsed(),
               static_cast<long long>(iters), bytes / 1e9, static_cast<long long>(wrongAll), rssMax / 1048576.0);
        fflush(stdout);
      }
    }
  }
  const double growth = rssBase > 0 ? 100.0 * (rssPeakAfter - rssBase) / rssBase : 0;
  int64_t mine[4] = {wrong, rssBase, rssPeakAfter, static_cast<int64_t>(growth * 1000)}, all[64 * 4] = {};
  const bool gathered =
      status == 0 && n <= 64 && strataAllGather(mine, all, 4, strataInt64, comm, nullptr) == strataSuccess;
  if (rank == 0 && gathered) {
    printf("strata_soak: %d ranks, %.0f s, %lld calls (", n, elapsed(), static_cast<long long>(iters));
    bool first = true;
    for (const auto& kv : calls) {
      printf("%s%s %lld", first ? "" : ", ", kv.first.c_str(), static_cast<long long>(kv.second));
      first = false;
    }
    printf(")\n  algorithms that ran on rank 0 (");
    first = true;
    for (const auto& kv : ran) {
      printf("%s%s %lld", first ? "" : ", ", kv.first.c_str(), static_cast<long long>(kv.second));
      first = false;
    }
    printf(")\n");
    int64_t wrongAll = 0;
    double worst = 0;
    for (int q = 0; q < n; ++q) {
      wrongAll += all[4 * q];
      worst = std::max(worst, all[4 * q + 3] / 1000.0);
      printf("  rank %d: RSS after warm-up %.1f MiB, peak after %.1f MiB (%+.2f%%)\n", q, all[4 * q + 1] / 1048576.0,
             all[4 * q + 2] / 1048576.0, all[4 * q + 3] / 1000.0);
    }
    printf("wrong results: %lld; worst RSS growth after warm-up: %.2f%% (limit %.1f%%)\n",
           static_cast<long long>(wrongAll), worst, o.maxRssGrowthPct);
    if (wrongAll > 0 || worst >= o.maxRssGrowthPct) status = 1;
  }
  for (strataComm_t c : comms)
    if (c != comm && strataCommDestroy(c) != strataSuccess && status == 0) status = 2;
  if (strataCommDestroy(comm) != strataSuccess && status == 0) status = 2;
  return status;
}

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) { return strata::perf::Main(argc, argv); }
