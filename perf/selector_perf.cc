// selector_perf: the selector's choice against every algorithm forced, within one job, for the allreduce or (-C)
// another collective (float32 sums; broadcast and reduce from root 0). Each forced algorithm gets a communicator of its
// own (strataCommSplit with the config field `algorithm`); the launcher's communicator runs the selector's choice, and
// one more split communicator the tool's own calls (barriers, the gathering of times and of checks). For
// every size the communicators take turns, a block of back-to-back calls each, in an order shuffled round by round, so
// that every algorithm meets the same moments of the machine and follows every other. (Tables made launch by launch,
// perf/selector_check.py, compare launches that the 2-core development VM ran at different speeds: in three such tables
// on 4 ranks the same forced ring at 8-128 MiB spread 1.05-2.26x between its fastest and slowest launch.)
//
//   selector_perf [-b MIN] [-e MAX] [-f FACTOR] [-B BUFFER] [-n ROUNDS] [-x EXTRA] [-w WARMUP] [-k BLOCK] [-A ALGOS]
//                 [-C COLLECTIVE] [-c 0|1] [-T SEC]
//
// A size is the whole vector, as the selector counts it (SelectorBytes): the allgather's output and the
// reduce-scatter's input, a multiple of the ranks' count of floats. Broadcast and reduce blocks begin and end with a
// barrier on the tool's own communicator, inside the time: their ranks finish a call at different moments (a leaf
// after the root), and a block is timed to the last rank's end. (With the barriers on the launcher's communicator, its
// connections carried them behind the selector's calls: over 4 namespaces at 1 Gbit/s the selector's chain ran
// 1.10-1.30x the forced chain's time from 32 KiB to 512 KiB in three jobs of three.)
//
// Per size: each communicator's median time per call over its rounds' blocks, out of place and in place (every
// block's time the average over the ranks, as nccl-tests reports), the fastest forced algorithm, and the ratio. The
// "choice" column is the forced run of the algorithm the selector ran against the best forced one ("-" where that
// algorithm is not among ALGOS): the choice judged on forced runs alone, apart from the moments the selector's own
// communicator met. A size whose ratio or choice after ROUNDS rounds is above halfway to the tolerance (1.05) gets
// EXTRA more rounds, and its medians are taken over all of them: on the 2-core development VM five rounds leave the
// same algorithm in two communicators up to 1.38x apart, thirty rounds mostly within 1.09x. The row then ends with
// the ratio the first rounds gave; the summary counts the sizes over the tolerance both ways, and the choices. A
// forced algorithm that this shape or size does not fit runs its fallback, found in the warm-up calls: its column
// then shows "-", and it is not timed (the fallback is, under its own name). Calls rotate through buffers of the
// largest size, as the perf tools' sweeps do. Each size ends with one checked call per communicator (float32 sums of
// small integers, exact).
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "common/collective_benches.h"
#include "common/perf_options.h"
#include "common/strata_call.h"
#include "strata/strata.h"

namespace strata::perf {
namespace {

constexpr double kTolerance = 1.10;  // the selector within 10% of the best forced algorithm (issue 3)
constexpr double kAgainAbove = 1 + (kTolerance - 1) / 2;  // halfway to it: a size over this is measured again
// The settling passes (-S) run for sizes whose rotation holds this many slots or fewer: from 1 MiB with the default
// 256 MiB buffers, so that a pass costs at most about as much as one call of the largest size.
constexpr size_t kSettleMaxSlots = 256;

struct Options {
  size_t minBytes = 8, maxBytes = size_t{256} << 20;
  size_t bufferBytes = 0;  // -B: what calls rotate through (0: the largest size)
  size_t factor = 2;
  int rounds = 5, extra = 20, warmup = 3, block = 5, check = 1, timeoutSec = 0;
  int settle = 4;  // -S: passes through the whole rotation before a size's warm-up (sizes of kSettleMaxSlots or fewer)
  std::vector<std::string> algos;        // -A; none given: DefaultAlgos(collective)
  std::string collective = "allreduce";  // -C: a key of CollectiveBenchByKey, as STRATA_ALGO names it
};

// Every algorithm that serves the collective (docs/ALGORITHMS.md).
std::vector<std::string> DefaultAlgos(const std::string& collective) {
  if (collective == "allreduce")
    return {"ring", "tree", "rd", "rhd", "direct", "oneshot", "twoshot", "hier", "hier_leader"};
  if (collective == "broadcast" || collective == "reduce") return {"chain", "tree", "hier"};
  // allgather, reducescatter; not twoshot, which runs oneshot's plan for them (and the selector never picks)
  return {"ring", "rd", "rhd", "oneshot", "hier"};
}

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: selector_perf [-b MIN] [-e MAX] [-f FACTOR] [-B BUFFER] [-n ROUNDS] [-x EXTRA] [-w WARMUP] "
               "[-k BLOCK] [-A ALGOS] [-C COLLECTIVE] [-c 0|1] [-T SEC]\n"
               "  the selector's choice for COLLECTIVE (allreduce, the default, allgather, reducescatter, broadcast "
               "or reduce; float32 sums, root 0) against each algorithm of ALGOS (comma list; default: every one that "
               "serves COLLECTIVE, for allreduce ring,tree,rd,rhd,direct,oneshot,twoshot,hier,hier_leader; for "
               "allgather and reducescatter not twoshot, which runs oneshot's plan there) forced "
               "on a communicator of its own, "
               "block by block in one job\n"
               "  -b/-e/-f sizes (default 8 to 256M, factor 2; a size is the whole vector: the allgather's output, "
               "the reduce-scatter's input); -B the send and receive buffers calls rotate through "
               "(default: the largest size; -B 256M with -e 512K reads every call's input from cold memory); "
               "-n rounds per size (5); -x more rounds for a size whose ratio is over 1.05 after them (20; 0: none); "
               "-w warm-up calls per "
               "communicator and size (3); -S passes of the selector's communicator through every slot of the "
               "rotation before them, for sizes whose rotation has 256 slots or fewer (4; 0: none); -k calls per block "
               "from 1 MiB up (5; smaller sizes take up to 100 so "
               "that a block lasts about as long); -c 0 skips the check; -T the communicators' timeout\n");
}

bool ParseCount(const char* text, int lo, int hi, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < lo || v > hi) return false;
  *out = static_cast<int>(v);
  return true;
}

std::vector<std::string> SplitList(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// 0: run; 1: help printed; 2: bad arguments (printed).
int ParseOptions(int argc, char** argv, Options* o) {
  int c;
  while ((c = getopt(argc, argv, "b:e:f:B:n:x:w:S:k:A:C:c:T:h")) != -1) {
    bool ok = true;
    switch (c) {
      case 'b': ok = ParseSize(optarg, &o->minBytes); break;
      case 'e': ok = ParseSize(optarg, &o->maxBytes); break;
      case 'B': ok = ParseSize(optarg, &o->bufferBytes); break;
      case 'f': {
        int f = 0;
        ok = ParseCount(optarg, 2, 1024, &f);
        o->factor = static_cast<size_t>(f);
        break;
      }
      case 'n': ok = ParseCount(optarg, 1, 100000, &o->rounds); break;
      case 'x':
        ok = ParseCount(optarg, 0, 100000, &o->extra);
        break;
      case 'w': ok = ParseCount(optarg, 0, 100000, &o->warmup); break;
      case 'S':
        ok = ParseCount(optarg, 0, 1000, &o->settle);
        break;
      case 'k': ok = ParseCount(optarg, 1, 100000, &o->block); break;
      case 'c': ok = ParseCount(optarg, 0, 1, &o->check); break;
      case 'T': ok = ParseCount(optarg, 1, 86400, &o->timeoutSec); break;
      case 'A':
        o->algos = SplitList(optarg);
        ok = !o->algos.empty();
        break;
      case 'C':
        o->collective = optarg;
        ok = CollectiveBenchByKey(optarg) != nullptr;
        break;
      case 'h': Usage(stdout); return 1;
      default: ok = false;
    }
    if (!ok) {
      std::fprintf(stderr, "selector_perf: bad value for -%c%s%s\n", c == '?' ? optopt : c, optarg ? ": " : "",
                   optarg ? optarg : "");
      Usage(stderr);
      return 2;
    }
  }
  if (o->algos.empty()) o->algos = DefaultAlgos(o->collective);
  if (optind < argc || o->minBytes > o->maxBytes || o->maxBytes < sizeof(float)) {
    std::fprintf(stderr, "selector_perf: bad arguments (sizes: -b at most -e, -e at least 4)\n");
    Usage(stderr);
    return 2;
  }
  return 0;
}

double NowUs() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// What each rank puts in element i: small integers, so that float32 sums of up to 2^16 ranks are exact.
float Input(int rank, size_t i) { return static_cast<float>((rank * 3 + static_cast<int>(i % 7)) % 11); }

// Sizes over the tolerance (after all rounds, after the first ones), sizes measured again, sizes with a wrong result.
struct Counts {
  int marked = 0, markedFirst = 0, again = 0, wrong = 0;
  int choiceForced = 0, choiceMarked = 0;  // sizes whose selector's algorithm ran forced too; of those, over tolerance
};

class Session {
 public:
  explicit Session(const Options& o) : o_(o), bench_(*CollectiveBenchByKey(o.collective.c_str())) {}

  int run() {
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    if (o_.timeoutSec > 0) cfg.timeoutMs = o_.timeoutSec * 1000;
    PERF_STRATA_CHECK(nullptr, strataCommInitFromEnv(&base_, o_.timeoutSec > 0 ? &cfg : nullptr));
    PERF_STRATA_CHECK(base_, strataCommUserRank(base_, &rank_));
    PERF_STRATA_CHECK(base_, strataCommCount(base_, &nranks_));
    comms_.push_back(base_);
    names_.push_back("selector");
    for (const std::string& a : o_.algos) {
      const std::string spec = o_.collective + ":" + a;
      strataConfig_t forced = cfg;
      forced.algorithm = spec.c_str();
      strataComm_t c = nullptr;
      PERF_STRATA_CHECK(base_, strataCommSplit(base_, 0, rank_, &c, &forced));
      comms_.push_back(c);
      names_.push_back(a);
    }
    PERF_STRATA_CHECK(base_, strataCommSplit(base_, 0, rank_, &sync_, &cfg));
    // Buffers of the largest size; smaller calls rotate through them (the perf tools' sweep does the same).
    send_.assign((std::max(o_.maxBytes, o_.bufferBytes) + 63) / 64 * 16, 0.0f);
    recv_.assign(send_.size(), 0.0f);
    if (rank_ == 0) {
      std::printf(
          "# selector_perf: %s, %d ranks, %zu communicators (the selector's and %zu forced), %d rounds (%d more "
          "where the ratio is over %.2f), %d warm-up calls per communicator and size, %d passes through the "
          "rotation before them where it has %zu slots or fewer\n",
          o_.collective.c_str(), nranks_, comms_.size(), comms_.size() - 1, o_.rounds, o_.extra, kAgainAbove, o_.warmup,
          o_.settle, kSettleMaxSlots);
      std::printf(
          "| size | selector (us) | ran | best forced (us) | best | ratio | choice | ring (us) | ring / selector |");
      for (size_t c = 1; c < comms_.size(); ++c) std::printf(" %s |", names_[c].c_str());
      std::printf("\n|---|---|---|---|---|---|---|---|---|");
      for (size_t c = 1; c < comms_.size(); ++c) std::printf("---|");
      std::printf("\n");
      std::fflush(stdout);
    }
    Counts counts;
    const size_t divisor = bench_.sizeDivisor(nranks_);
    for (size_t bytes = o_.minBytes; bytes <= o_.maxBytes; bytes *= o_.factor) {
      const size_t elements = bytes / sizeof(float) / divisor * divisor;
      if (elements > 0) measure(bench_.shape(elements, nranks_), elements * sizeof(float), &counts);
      if (bytes == 0) break;
    }
    if (rank_ == 0) {
      std::printf("# sizes measured again (%d more rounds): %d\n", o_.extra, counts.again);
      std::printf("# sizes over %.2fx the best forced algorithm after %d rounds: %d\n", kTolerance, o_.rounds,
                  counts.markedFirst);
      std::printf("# sizes over %.2fx the best forced algorithm: %d\n", kTolerance, counts.marked);
      std::printf("# sizes whose choice, forced, ran over %.2fx the best forced algorithm: %d of %d\n", kTolerance,
                  counts.choiceMarked, counts.choiceForced);
      std::printf("# wrong results: %d\n", counts.wrong);
    }
    // Every rank destroys the forced communicators before any leaves (a peer process gone while a communicator of
    // it still lives here is what a communicator's watchdog reports).
    for (size_t c = comms_.size(); c-- > 1;) PERF_STRATA_CHECK(comms_[c], strataCommDestroy(comms_[c]));
    PERF_STRATA_CHECK(sync_, strataCommDestroy(sync_));
    PERF_STRATA_CHECK(base_, strataBarrier(base_));
    PERF_STRATA_CHECK(nullptr, strataCommDestroy(base_));
    return counts.wrong ? 1 : 0;
  }

 private:
  int root() const { return bench_.rooted() ? 0 : -1; }

  // The floats of one slot of the rotation for `shape` (64-byte aligned), and how many slots the buffers hold.
  static size_t SlotFloats(const BufferShape& shape) {
    return (std::max(shape.sendCount, shape.recvCount) + 15) / 16 * 16;
  }
  size_t slots(const BufferShape& shape) const { return send_.size() / SlotFloats(shape); }

  // One call of `shape` on communicator c, out of place or in place, at the next rotating slot.
  void call(size_t c, const BufferShape& shape, bool inPlace) {
    const size_t slot = SlotFloats(shape);
    const size_t offset = (calls_++ % slots(shape)) * slot;
    float* base = recv_.data() + offset;
    const size_t rank = static_cast<size_t>(rank_);
    const float* send = inPlace ? base + rank * shape.sendInPlaceOffset : send_.data() + offset;
    float* recv = inPlace ? base + rank * shape.recvInPlaceOffset : base;
    bench_.run(CallArgs{send, recv, shape.count, strataFloat32, strataSum, root(), comms_[c], rank_, nranks_, nullptr});
  }

  // One checked call on c: false when an output element differs from what every rank's input makes of it.
  bool checked(size_t c, const BufferShape& shape) {
    for (size_t i = 0; i < shape.sendCount; ++i) send_[i] = Input(rank_, i);
    bench_.run(CallArgs{send_.data(), recv_.data(), shape.count, strataFloat32, strataSum, root(), comms_[c], rank_,
                        nranks_, nullptr});
    const OutputPlace place{rank_, nranks_, root(), shape.count};
    for (size_t i = 0; i < shape.recvCount; ++i) {
      const ElementSource from = bench_.expected(place, i);
      if (from.kind == ElementSource::Kind::kSkip) continue;
      double want = 0;
      if (from.kind == ElementSource::Kind::kCopy)
        want = Input(from.rank, from.index);
      else
        for (int r = 0; r < nranks_; ++r) want += Input(r, from.index);
      if (recv_[i] != static_cast<float>(want)) {
        std::fprintf(stderr, "rank %d: %s %s of %zu floats: element %zu is %g, expected %g\n", rank_, names_[c].c_str(),
                     o_.collective.c_str(), shape.count, i, recv_[i], want);
        return false;
      }
    }
    return true;
  }

  // Rounds [from, to) at this size: the communicators take turns, each a block of k calls out of place and then a
  // block of k in place, in an order shuffled round by round (the same on every rank: the round seeds it). Appends
  // this rank's time per call of every block to mine[c]. (With the first one moving round by round, each communicator
  // always followed the same one, and over 4 namespaces at 1 Gbit/s the forced rhd, which followed rd and its twice
  // the bytes, ran 1.21-1.25x the ring at 512 KiB - 1 MiB, where the two run alike alone.)
  void runRounds(const BufferShape& shape, int k, int from, int to, const std::vector<std::string>& ran,
                 std::vector<std::vector<double>>* mine) {
    const size_t nc = comms_.size();
    std::vector<size_t> order(nc);
    for (int r = from; r < to; ++r) {
      std::iota(order.begin(), order.end(), size_t{0});
      std::mt19937 shuffle(static_cast<uint32_t>(r) + 1);
      std::shuffle(order.begin(), order.end(), shuffle);
      for (size_t c : order) {
        if (c > 0 && ran[c] != names_[c]) continue;  // a fallback: not timed (every rank knows it alike)
        for (int inPlace = 0; inPlace < 2; ++inPlace) {
          const double t0 = NowUs();
          if (bench_.rooted()) PERF_STRATA_CHECK(sync_, strataBarrier(sync_));
          for (int i = 0; i < k; ++i) call(c, shape, inPlace != 0);
          if (bench_.rooted()) PERF_STRATA_CHECK(sync_, strataBarrier(sync_));
          (*mine)[c].push_back((NowUs() - t0) / k);
          if (c == 0 && !inPlace) selectorRan_ = lastAlgorithm(0);
        }
      }
    }
  }

  // Every communicator's median block time (each block's time the average over the ranks), over all the blocks in
  // mine. Every rank computes the same figures from the same gathered times.
  std::vector<double> medians(const std::vector<std::vector<double>>& mine) {
    const size_t nc = comms_.size();
    std::vector<double> flat;
    for (const std::vector<double>& m : mine) flat.insert(flat.end(), m.begin(), m.end());
    std::vector<double> all(flat.size() * nranks_);
    PERF_STRATA_CHECK(sync_, strataAllGather(flat.data(), all.data(), flat.size(), strataFloat64, sync_, nullptr));
    std::vector<double> us(nc, 0.0);
    size_t at = 0;
    for (size_t c = 0; c < nc; ++c) {
      std::vector<double> blocks;
      for (size_t b = 0; b < mine[c].size(); ++b, ++at) {
        double sum = 0;
        for (int q = 0; q < nranks_; ++q) sum += all[q * flat.size() + at];
        blocks.push_back(sum / nranks_);
      }
      if (blocks.empty()) continue;
      std::sort(blocks.begin(), blocks.end());
      const size_t m = blocks.size();
      us[c] = m % 2 ? blocks[m / 2] : (blocks[m / 2 - 1] + blocks[m / 2]) / 2;
    }
    return us;
  }

  // The fastest timed forced communicator (0: none timed).
  size_t fastest(const std::vector<double>& us, const std::vector<std::string>& ran) const {
    size_t best = 0;
    for (size_t c = 1; c < comms_.size(); ++c)
      if (ran[c] == names_[c] && (best == 0 || us[c] < us[best])) best = c;
    return best;
  }

  // The algorithm communicator c ran its last call with.
  std::string lastAlgorithm(size_t c) {
    const char* name = nullptr;
    PERF_STRATA_CHECK(comms_[c], strataCommGetLastAlgorithm(comms_[c], &name));
    return name ? name : "?";
  }

  // One size: `bytes` the whole vector of `shape`.
  void measure(const BufferShape& shape, size_t bytes, Counts* counts) {
    const size_t nc = comms_.size();
    // Blocks of about the same length at every size: at least `block` calls, more below 1 MiB (up to 100).
    const int k = static_cast<int>(std::min<size_t>(
        100, std::max<size_t>(o_.block, (size_t{1} << 20) * o_.block / std::max<size_t>(bytes, 1) / 8)));
    std::vector<std::string> ran(nc);
    // What the library does to buffers passed again and again (moving them onto huge pages, docs/ALGORITHMS.md) is
    // done before the timing starts: every slot of the rotation passed `settle` times on the selector's communicator.
    if (slots(shape) <= kSettleMaxSlots)
      for (size_t i = 0; i < slots(shape) * static_cast<size_t>(o_.settle); ++i) call(0, shape, false);
    for (size_t c = 0; c < nc; ++c) {
      for (int i = 0; i < o_.warmup; ++i) call(c, shape, false);
      ran[c] = lastAlgorithm(c);
    }
    std::vector<std::vector<double>> mine(nc);
    runRounds(shape, k, 0, o_.rounds, ran, &mine);
    // The selector's algorithm as its last out-of-place block ran it (as the warm-up's calls, out of place, are
    // read): a class timed on its calls (on one host) may still have been on trial after the warm-up.
    ran[0] = selectorRan_;
    std::vector<double> us = medians(mine);
    size_t best = fastest(us, ran);
    // The choice itself: the forced communicator running the algorithm the selector ran, against the best forced.
    // The selector's own median and the forced ones are separate samples of the machine; this ratio compares forced
    // runs only, so that it separates a wrong choice from a slow moment of the selector's communicator.
    auto chosenOf = [&]() {
      size_t chosen = 0;
      for (size_t c = 1; c < nc; ++c)
        if (ran[c] == names_[c] && names_[c] == ran[0]) chosen = c;
      return chosen;
    };
    size_t chosen = chosenOf();
    const double firstRatio = best ? us[0] / us[best] : 0;
    const bool again =
        best && o_.extra > 0 && (firstRatio > kAgainAbove || (chosen && us[chosen] / us[best] > kAgainAbove));
    if (again) {
      runRounds(shape, k, o_.rounds, o_.rounds + o_.extra, ran, &mine);
      ran[0] = selectorRan_;
      us = medians(mine);
      best = fastest(us, ran);
      chosen = chosenOf();
    }
    int bad = 0;
    if (o_.check)
      for (size_t c = 0; c < nc; ++c) bad += checked(c, shape) ? 0 : 1;
    int anyBad = 0;
    PERF_STRATA_CHECK(sync_, strataAllReduce(&bad, &anyBad, 1, strataInt32, strataMax, sync_, nullptr));
    counts->wrong += anyBad;
    const double ratio = best ? us[0] / us[best] : 0;
    const bool over = best && ratio > kTolerance;
    counts->marked += over;
    counts->markedFirst += best && firstRatio > kTolerance;
    counts->again += again;
    const double choiceRatio = best && chosen ? us[chosen] / us[best] : 0;
    const bool choiceOver = choiceRatio > kTolerance;
    counts->choiceForced += chosen != 0 && best != 0;
    counts->choiceMarked += choiceOver;
    if (rank_ != 0) return;
    double ringUs = -1;
    for (size_t c = 1; c < nc; ++c)
      if (ran[c] == names_[c] && names_[c] == "ring") ringUs = us[c];
    std::printf("| %zu | %.1f | %s | %.1f | %s | %.2f%s |", bytes, us[0], ran[0].c_str(), best ? us[best] : 0.0,
                best ? names_[best].c_str() : "-", ratio, over ? " **" : "");
    if (choiceRatio > 0)
      std::printf(" %.2f%s |", choiceRatio, choiceOver ? " **" : "");
    else
      std::printf(" - |");
    if (ringUs > 0)
      std::printf(" %.1f | %.2f |", ringUs, ringUs / us[0]);
    else
      std::printf(" - | - |");
    for (size_t c = 1; c < nc; ++c) {
      if (ran[c] == names_[c])
        std::printf(" %.1f |", us[c]);
      else
        std::printf(" - |");
    }
    if (again) std::printf(" %d rounds; after %d: %.2f", o_.rounds + o_.extra, o_.rounds, firstRatio);
    std::printf("%s\n", anyBad ? " WRONG" : "");
    std::fflush(stdout);
  }

  const Options& o_;
  const CollectiveBench& bench_;
  strataComm_t base_ = nullptr;
  strataComm_t sync_ = nullptr;  // the tool's own calls: barriers, gathering times and checks
  int rank_ = 0, nranks_ = 1;
  std::vector<strataComm_t> comms_;
  std::vector<std::string> names_;
  size_t calls_ = 0;
  std::vector<float> send_, recv_;
  std::string selectorRan_;  // the algorithm of the selector's last out-of-place call in runRounds
};

}  // namespace
}  // namespace strata::perf

int main(int argc, char** argv) {
  strata::perf::Options o;
  const int parsed = strata::perf::ParseOptions(argc, argv, &o);
  if (parsed != 0) return parsed == 1 ? 0 : 2;
  return strata::perf::Session(o).run();
}
