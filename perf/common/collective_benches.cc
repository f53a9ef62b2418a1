// The perf tools' collectives (all but alltoall and sendrecv), each a CollectiveBench, by the key STRATA_ALGO
// uses for it: all_reduce_perf, all_gather_perf, reduce_scatter_perf, broadcast_perf and reduce_perf run one each,
// selector_perf any of them.
#include "collective_benches.h"

#include <cstring>

namespace strata::perf {
namespace {

class AllReduceBench final : public CollectiveBench {
 public:
  const char* name() const override { return "AllReduce"; }
  bool reduces() const override { return true; }
  BufferShape shape(size_t elements, int /*nranks*/) const override {
    return SameCountShape(elements);  // in-place: recvbuff == sendbuff
  }
  // A ring moves 2(n-1)/n of the buffer over each link.
  double busBwFactor(int n) const override { return 2.0 * (n - 1) / n; }
  bool quantizable() const override { return true; }
  void run(const CallArgs& a) const override {
    if (a.quant) {
      PERF_STRATA_CHECK(a.comm, strataAllReduceEx(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr, a.quant));
      return;
    }
    PERF_STRATA_CHECK(a.comm, strataAllReduce(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& /*place*/, size_t i) const override { return ElementSource::Reduce(i); }
};

class AllGatherBench final : public CollectiveBench {
 public:
  const char* name() const override { return "AllGather"; }
  size_t sizeDivisor(int nranks) const override { return static_cast<size_t>(nranks); }
  BufferShape shape(size_t elements, int nranks) const override {
    BufferShape s;
    s.count = s.sendCount = elements / static_cast<size_t>(nranks);
    s.recvCount = elements;
    s.sendInPlaceOffset = s.count;  // in-place: each rank's input already sits in its slot of the output
    return s;
  }
  double busBwFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool quantizable() const override { return true; }
  void run(const CallArgs& a) const override {
    if (a.quant) {
      PERF_STRATA_CHECK(a.comm, strataAllGatherEx(a.send, a.recv, a.count, a.type, a.comm, nullptr, a.quant));
      return;
    }
    PERF_STRATA_CHECK(a.comm, strataAllGather(a.send, a.recv, a.count, a.type, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return ElementSource::Copy(static_cast<int>(i / p.count), i % p.count);
  }
};

class ReduceScatterBench final : public CollectiveBench {
 public:
  const char* name() const override { return "ReduceScatter"; }
  bool reduces() const override { return true; }
  size_t sizeDivisor(int nranks) const override { return static_cast<size_t>(nranks); }
  BufferShape shape(size_t elements, int nranks) const override {
    BufferShape s;
    s.count = s.recvCount = elements / static_cast<size_t>(nranks);
    s.sendCount = elements;
    s.recvInPlaceOffset = s.count;  // in-place: each rank's block of the input receives its result
    return s;
  }
  double busBwFactor(int n) const override { return static_cast<double>(n - 1) / n; }
  bool quantizable() const override { return true; }
  void run(const CallArgs& a) const override {
    if (a.quant) {
      PERF_STRATA_CHECK(a.comm,
                        strataReduceScatterEx(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr, a.quant));
      return;
    }
    PERF_STRATA_CHECK(a.comm, strataReduceScatter(a.send, a.recv, a.count, a.type, a.op, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return ElementSource::Reduce(static_cast<size_t>(p.rank) * p.count + i);
  }
};

class BroadcastBench final : public CollectiveBench {
 public:
  const char* name() const override { return "Broadcast"; }
  bool rooted() const override { return true; }
  BufferShape shape(size_t elements, int /*nranks*/) const override { return SameCountShape(elements); }
  double busBwFactor(int /*n*/) const override { return 1.0; }
  bool hasInput(int rank, int root) const override { return rank == root; }
  void run(const CallArgs& a) const override {
    PERF_STRATA_CHECK(a.comm, strataBroadcast(a.send, a.recv, a.count, a.type, a.root, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override { return ElementSource::Copy(p.root, i); }
};

class ReduceBench final : public CollectiveBench {
 public:
  const char* name() const override { return "Reduce"; }
  bool reduces() const override { return true; }
  bool rooted() const override { return true; }
  BufferShape shape(size_t elements, int /*nranks*/) const override { return SameCountShape(elements); }
  double busBwFactor(int /*n*/) const override { return 1.0; }
  void run(const CallArgs& a) const override {
    PERF_STRATA_CHECK(a.comm, strataReduce(a.send, a.recv, a.count, a.type, a.op, a.root, a.comm, nullptr));
  }
  ElementSource expected(const OutputPlace& p, size_t i) const override {
    return p.rank == p.root ? ElementSource::Reduce(i) : ElementSource::Skip();
  }
};

}  // namespace

const CollectiveBench* CollectiveBenchByKey(const char* key) {
  static const AllReduceBench allReduce;
  static const AllGatherBench allGather;
  static const ReduceScatterBench reduceScatter;
  static const BroadcastBench broadcast;
  static const ReduceBench reduce;
  static const struct {
    const char* key;
    const CollectiveBench* bench;
  } kBenches[] = {{"allreduce", &allReduce},
                  {"allgather", &allGather},
                  {"reducescatter", &reduceScatter},
                  {"broadcast", &broadcast},
                  {"reduce", &reduce}};
  for (const auto& b : kBenches)
    if (std::strcmp(key, b.key) == 0) return b.bench;
  return nullptr;
}

}  // namespace strata::perf
