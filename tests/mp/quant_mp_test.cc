// Quantized collectives through the public API on real processes: strataAllReduceEx, strataReduceScatterEx
// and strataAllGatherEx with a spec per call, the communicator's `quant` config field and STRATA_QUANT, over
// shared memory, TCP and two fake hosts (where qhier runs). Results are checked against a float64 reduction of
// the same inputs computed here, every rank must end bit-identical, and the rules of docs/QUANTIZATION.md
// ("Which calls") are checked: exact below STRATA_QUANT_MIN_BYTES and on one host, errors for ineligible calls.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "mp/mp_harness.h"
#include "support/ref_numerics.h"

namespace strata {
namespace test {
namespace {

// A standard normal value for (rank, element, salt): Box-Muller on two hashed uniforms.
double Gauss(int rank, size_t i, uint64_t salt) {
  auto mix = [](uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
  };
  const uint64_t h = mix(salt * 0x100000001b3ull ^ mix(static_cast<uint64_t>(rank) << 40 ^ i));
  const double u1 = (static_cast<double>(h >> 11) + 0.5) / 9007199254740992.0;
  const double u2 = static_cast<double>(mix(h) >> 11) / 9007199254740992.0;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
}

size_t ElemSize(strataDataType_t t) { return t == strataFloat32 ? 4 : 2; }

// Values in the I/O type: float, or fp16/bf16 bits.
void Store(strataDataType_t t, void* buf, size_t i, double v) {
  if (t == strataFloat32) {
    static_cast<float*>(buf)[i] = static_cast<float>(v);
  } else {
    static_cast<uint16_t*>(buf)[i] =
        static_cast<uint16_t>(ref::Encode(v, t == strataFloat16 ? ref::kFp16 : ref::kBf16));
  }
}
double Load(strataDataType_t t, const void* buf, size_t i) {
  if (t == strataFloat32) return static_cast<const float*>(buf)[i];
  return ref::Decode(static_cast<const uint16_t*>(buf)[i], t == strataFloat16 ? ref::kFp16 : ref::kBf16);
}

// Rank r's input element i exactly as the library sees it (rounded to the I/O type).
double Input(strataDataType_t t, int r, size_t i, uint64_t salt) {
  uint16_t bits[1];
  float f[1];
  void* p = t == strataFloat32 ? static_cast<void*>(f) : static_cast<void*>(bits);
  Store(t, p, 0, Gauss(r, i, salt));
  return Load(t, p, 0);
}

std::vector<char> Fill(strataDataType_t t, int r, size_t count, uint64_t salt) {
  std::vector<char> buf(count * ElemSize(t));
  for (size_t i = 0; i < count; ++i) Store(t, buf.data(), i, Input(t, r, i, salt));
  return buf;
}

enum class Coll { kAllReduce, kReduceScatter, kAllGather };

// Float64 reference of output element i on rank `rank`.
double Reference(Coll c, strataDataType_t t, strataRedOp_t op, int n, int rank, size_t count, size_t i, uint64_t salt) {
  if (c == Coll::kAllGather) return Input(t, static_cast<int>(i / count), i % count, salt);
  const size_t idx = c == Coll::kReduceScatter ? rank * count + i : i;
  double s = 0;
  for (int q = 0; q < n; ++q) s += Input(t, q, idx, salt);
  return op == strataAvg ? s / n : s;
}

// Relative L2 error of out[0, elems) against the reference.
double RelError(Coll c, strataDataType_t t, strataRedOp_t op, int n, int rank, size_t count, const void* out,
                size_t elems, uint64_t salt) {
  double err = 0, ref = 0;
  for (size_t i = 0; i < elems; ++i) {
    const double want = Reference(c, t, op, n, rank, count, i, salt);
    const double d = Load(t, out, i) - want;
    err += d * d;
    ref += want * want;
  }
  return ref > 0 ? std::sqrt(err / ref) : std::sqrt(err);
}

std::string LastAlgorithm(strataComm_t comm) {
  const char* name = nullptr;
  return strataCommGetLastAlgorithm(comm, &name) == strataSuccess && name ? name : "?";
}

// Every rank's output bytes gathered (exact, as bytes): empty when all match rank 0's.
std::string SameOnEveryRank(strataComm_t comm, const std::vector<char>& out, int n) {
  std::vector<char> all(out.size() * n);
  if (strataAllGather(out.data(), all.data(), out.size(), strataUint8, comm, nullptr) != strataSuccess)
    return std::string("gathering outputs failed: ") + strataGetLastError(comm);
  for (int q = 1; q < n; ++q)
    if (memcmp(all.data(), all.data() + q * out.size(), out.size()) != 0)
      return "rank " + std::to_string(q) + "'s output differs from rank 0's";
  return "";
}

strataQuantOptions_t Options(const char* spec) {
  strataQuantOptions_t o = STRATA_QUANT_OPTIONS_INITIALIZER;
  if (strataQuantOptionsParse(spec, &o) != strataSuccess) abort();
  return o;
}

// One quantized call through its Ex entry point, checked: error within `bound`, every rank bit-identical
// (allreduce, allgather), the algorithm a quantized one.
std::string CheckEx(Coll c, strataComm_t comm, int rank, int n, const char* spec, strataDataType_t t,
                    strataRedOp_t op, size_t count, bool inPlace, double bound, uint64_t salt, const char* wantAlgo) {
  const strataQuantOptions_t q = Options(spec);
  const size_t es = ElemSize(t);
  const size_t sendElems = c == Coll::kReduceScatter ? count * n : count;
  const size_t recvElems = c == Coll::kAllGather ? count * n : count;
  std::vector<char> send = Fill(t, rank, sendElems, salt);
  std::vector<char> recv(std::max(sendElems, recvElems) * es, 0x7f);
  const void* sp = send.data();
  if (inPlace) {
    // In place as NCCL defines it: allgather's input is this rank's block of the output; reduce-scatter's output
    // is this rank's block of the input.
    const size_t at = c == Coll::kAllGather ? rank * count * es : 0;
    memcpy(recv.data() + at, send.data(), send.size());
    sp = recv.data() + at;
  }
  void* rp = inPlace && c == Coll::kReduceScatter ? recv.data() + rank * count * es : recv.data();
  strataResult_t rc = strataInternalError;
  switch (c) {
    case Coll::kAllReduce: rc = strataAllReduceEx(sp, rp, count, t, op, comm, nullptr, &q); break;
    case Coll::kReduceScatter: rc = strataReduceScatterEx(sp, rp, count, t, op, comm, nullptr, &q); break;
    case Coll::kAllGather: rc = strataAllGatherEx(sp, rp, count, t, comm, nullptr, &q); break;
  }
  const std::string what = std::string(spec) + " count " + std::to_string(count) + (inPlace ? " in place" : "");
  if (rc != strataSuccess) return what + ": call failed: " + strataGetLastError(comm);
  const std::string algo = LastAlgorithm(comm);
  if (algo != wantAlgo) return what + ": ran " + algo + ", expected " + wantAlgo;
  std::vector<char> out(static_cast<char*>(rp), static_cast<char*>(rp) + recvElems * es);
  const double err = RelError(c, t, op, n, rank, count, out.data(), recvElems, salt);
  if (!(err <= bound)) return what + ": relative error " + std::to_string(err) + " above " + std::to_string(bound);
  // A quantized result is not the exact one (the check above would pass an exact path too).
  if (count >= 1024 && err < 1e-6) return what + ": error " + std::to_string(err) + ": the call ran exact";
  if (c != Coll::kReduceScatter) return SameOnEveryRank(comm, out, n).empty() ? "" : what + ": " + SameOnEveryRank(comm, out, n);
  return "";
}

struct Shape {
  const char* name;
  int nranks;
  bool tcp;
  int nodes;
  const char* algo;  // what a quantized allreduce runs on it

  MpOptions options() const {
    MpOptions o;
    o.nranks = nranks;
    o.tcp = tcp;
    o.nodes = nodes;
    return o;
  }
};

void PrintTo(const Shape& s, std::ostream* os) { *os << s.name; }

class QuantShapes : public ::testing::TestWithParam<Shape> {};

TEST_P(QuantShapes, AllReduceWithinTheBoundAndBitIdentical) {
  const Shape s = GetParam();
  MpResult r = RunRanks(s.options(), [&](int rank, int n, strataComm_t comm) -> std::string {
    struct Case {
      const char* spec;
      strataDataType_t type;
      strataRedOp_t op;
      size_t count;
      bool inPlace;
      double bound;
    };
    // Bounds: docs/QUANTIZATION.md's at 8 ranks (int8, int4); bf16 and fp8 from their mantissa widths.
    const Case cases[] = {
        {"int8:128", strataFloat32, strataSum, 300001, false, 0.010},
        {"int8:128", strataFloat32, strataSum, 70000, true, 0.010},
        {"int8:32", strataFloat32, strataAvg, 5000, false, 0.008},
        {"int4:32", strataFloat32, strataSum, 20000, false, 0.14},
        {"bf16", strataFloat32, strataSum, 20000, false, 0.004},
        {"fp8e4m3:64", strataFloat16, strataSum, 9999, false, 0.05},
        {"int8:256:fp16:stochastic:7", strataBfloat16, strataAvg, 12345, false, 0.02},
        {"int8:128", strataFloat32, strataSum, 3, false, 0.010},
    };
    // Zero elements: nothing to do, no error. First: a rank that finishes its last call early may exit, and a
    // peer's watchdog then breaks the communicator for the calls that peer makes afterwards.
    const strataQuantOptions_t q = Options("int8:128");
    float dummy = 0;
    if (strataAllReduceEx(&dummy, &dummy, 0, strataFloat32, strataSum, comm, nullptr, &q) != strataSuccess)
      return std::string("count 0 failed: ") + strataGetLastError(comm);
    uint64_t salt = 1;
    for (const Case& c : cases) {
      std::string err =
          CheckEx(Coll::kAllReduce, comm, rank, n, c.spec, c.type, c.op, c.count, c.inPlace, c.bound, salt++, s.algo);
      if (!err.empty()) return err;
    }
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST_P(QuantShapes, ReduceScatterAndAllGather) {
  const Shape s = GetParam();
  MpResult r = RunRanks(s.options(), [&](int rank, int n, strataComm_t comm) -> std::string {
    // qhier serves allreduce only: the others run qdirect on every shape.
    for (bool inPlace : {false, true}) {
      std::string err = CheckEx(Coll::kReduceScatter, comm, rank, n, "int8:128", strataFloat32, strataSum, 40000,
                                inPlace, 0.010, 11, "qdirect");
      if (err.empty())
        err = CheckEx(Coll::kAllGather, comm, rank, n, "int8:64", strataFloat32, strataSum, 30011, inPlace, 0.010, 12,
                      "qdirect");
      if (err.empty())
        err = CheckEx(Coll::kAllGather, comm, rank, n, "bf16", strataBfloat16, strataSum, 777, inPlace, 0.004, 13,
                      "qdirect");
      if (!err.empty()) return err;
    }
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Shapes, QuantShapes,
                         ::testing::Values(Shape{"Shm2", 2, false, 1, "qdirect"}, Shape{"Shm3", 3, false, 1, "qdirect"},
                                           Shape{"Tcp4", 4, true, 1, "qdirect"},
                                           Shape{"TwoHostsOfTwo", 4, false, 2, "qhier"}),
                         [](const ::testing::TestParamInfo<Shape>& p) { return std::string(p.param.name); });

// Stochastic rounding: the same seed gives the same bytes on a second communicator (call numbers restart),
// a different seed different ones; calls in a row differ.
TEST(QuantRounding, StochasticRepeatsWithTheSeed) {
  MpOptions o;
  o.nranks = 3;
  MpResult r = RunRanks(o, [](int rank, int n, strataComm_t comm) -> std::string {
    const size_t count = 4096;
    std::vector<char> in = Fill(strataFloat32, rank, count, 5);
    auto run = [&](strataComm_t c, const char* spec, std::vector<float>* out) {
      const strataQuantOptions_t q = Options(spec);
      out->assign(count, 0);
      return strataAllReduceEx(in.data(), out->data(), count, strataFloat32, strataSum, c, nullptr, &q);
    };
    strataComm_t again = nullptr;
    if (strataCommSplit(comm, 0, rank, &again, nullptr) != strataSuccess)
      return std::string("split failed: ") + strataGetLastError(comm);
    std::vector<float> a, b, c, d;
    std::string err;
    if (run(comm, "int8:128:fp32:stochastic:42", &a) != strataSuccess ||
        run(comm, "int8:128:fp32:stochastic:42", &b) != strataSuccess ||
        run(again, "int8:128:fp32:stochastic:42", &c) != strataSuccess ||
        run(again, "int8:128:fp32:stochastic:43", &d) != strataSuccess)
      err = std::string("call failed: ") + strataGetLastError(nullptr);
    else if (a != c)
      err = "the same seed on a new communicator gave different bytes";
    else if (a == b)
      err = "two calls in a row drew the same random bits";
    else if (c == d)
      err = "a different seed gave the same bytes";
    (void)n;
    strataCommDestroy(again);
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// A spec given per call that cannot apply is an error on every rank, before anything moves; the communicator
// stays usable.
TEST(QuantCalls, IneligibleCallSpecIsAnError) {
  MpOptions o;
  o.nranks = 2;
  MpResult r = RunRanks(o, [](int rank, int n, strataComm_t comm) -> std::string {
    (void)rank;
    const strataQuantOptions_t q = Options("int8:128");
    int32_t ints[8] = {};
    float f[8] = {};
    if (strataAllReduceEx(ints, ints, 8, strataInt32, strataSum, comm, nullptr, &q) != strataInvalidArgument)
      return "int32 with a spec was not refused";
    if (!strstr(strataGetLastError(comm), "only sum and avg of float32, float16 and bfloat16"))
      return std::string("message does not say why: ") + strataGetLastError(comm);
    if (strataAllReduceEx(f, f, 8, strataFloat32, strataMax, comm, nullptr, &q) != strataInvalidArgument)
      return "max with a spec was not refused";
    double d[8] = {};
    if (strataAllGatherEx(d, d, 4, strataFloat64, comm, nullptr, &q) != strataInvalidArgument)
      return "float64 allgather with a spec was not refused";
    strataQuantOptions_t bad = q;
    bad.blockSize = 100;
    if (strataAllReduceEx(f, f, 8, strataFloat32, strataSum, comm, nullptr, &bad) != strataInvalidArgument ||
        !strstr(strataGetLastError(comm), "quantization options"))
      return std::string("block size 100 was not refused clearly: ") + strataGetLastError(comm);
    // Still usable, and a strataQuantNone spec is the exact path.
    const strataQuantOptions_t none = Options("none");
    float x[4] = {1, 2, 3, 4}, y[4] = {};
    if (strataAllReduceEx(x, y, 4, strataFloat32, strataSum, comm, nullptr, &none) != strataSuccess)
      return std::string("exact call after the refusals failed: ") + strataGetLastError(comm);
    for (int i = 0; i < 4; ++i)
      if (y[i] != static_cast<float>(n * (i + 1))) return "exact call after the refusals gave a wrong value";
    if (LastAlgorithm(comm).rfind("q", 0) == 0) return "a none spec ran " + LastAlgorithm(comm);
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// The communicator's spec (config field or STRATA_QUANT) covers every plain call: quantized between hosts from
// STRATA_QUANT_MIN_BYTES up; exact below it, on one host, and for calls it cannot apply to.
std::string CheckCommSpec(strataComm_t comm, int rank, int n, bool expectQuantized) {
  const size_t big = 600000, small = 1000;  // 2.4 MB and 4 KB of float (the minimum is 1M)
  std::vector<char> in = Fill(strataFloat32, rank, big, 21);
  std::vector<char> out(in.size());
  if (strataAllReduce(in.data(), out.data(), big, strataFloat32, strataSum, comm, nullptr) != strataSuccess)
    return std::string("allreduce failed: ") + strataGetLastError(comm);
  const std::string algo = LastAlgorithm(comm);
  const double err = RelError(Coll::kAllReduce, strataFloat32, strataSum, n, rank, big, out.data(), big, 21);
  if (expectQuantized && (algo.rfind("q", 0) != 0 || err > 0.010 || err < 1e-6))
    return "expected a quantized allreduce, ran " + algo + " with error " + std::to_string(err);
  if (!expectQuantized && (algo.rfind("q", 0) == 0 || err > 1e-6))
    return "expected an exact allreduce, ran " + algo + " with error " + std::to_string(err);
  if (strataAllReduce(in.data(), out.data(), small, strataFloat32, strataSum, comm, nullptr) != strataSuccess ||
      LastAlgorithm(comm).rfind("q", 0) == 0)
    return "a call below STRATA_QUANT_MIN_BYTES ran " + LastAlgorithm(comm);
  std::vector<int32_t> ints(big, rank + 1), sums(big);
  if (strataAllReduce(ints.data(), sums.data(), big, strataInt32, strataSum, comm, nullptr) != strataSuccess)
    return std::string("an int32 allreduce failed under the communicator's spec: ") + strataGetLastError(comm);
  if (sums[big - 1] != n * (n + 1) / 2 || LastAlgorithm(comm).rfind("q", 0) == 0) return "int32 allreduce not exact";
  return "";
}

TEST(QuantCommSpec, ConfigFieldQuantizesBetweenHostsOnly) {
  for (int nodes : {1, 2}) {
    MpOptions o;
    o.nranks = 4;
    o.nodes = nodes;
    // The harness's communicator has no spec: a split of it gets one through the config field.
    MpResult r2 = RunRanks(o, [&](int rank, int n, strataComm_t comm) -> std::string {
      strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
      cfg.quant = "int8:128";
      strataComm_t q = nullptr;
      if (strataCommSplit(comm, 0, rank, &q, &cfg) != strataSuccess)
        return std::string("split with quant failed: ") + strataGetLastError(comm);
      std::string err = CheckCommSpec(q, rank, n, nodes > 1);
      strataCommDestroy(q);
      return err;
    });
    EXPECT_TRUE(r2.ok()) << "nodes " << nodes << ": " << r2.summary();
  }
}

TEST(QuantCommSpec, EnvironmentSpecBetweenTwoHosts) {
  MpOptions o;
  o.nranks = 4;
  o.nodes = 2;
  o.beforeInit = [](int) { setenv("STRATA_QUANT", "int8:128", 1); };
  MpResult r = RunRanks(o, [](int rank, int n, strataComm_t comm) { return CheckCommSpec(comm, rank, n, true); });
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(QuantCommSpec, RanksMustAgree) {
  MpOptions o;
  o.nranks = 3;
  o.beforeInit = [](int rank) {
    if (rank == 2) setenv("STRATA_QUANT", "int4:32", 1);
  };
  o.destroyComm = false;
  // Init itself must fail on every rank, naming rank 2; RunRanks reports "init failed: <message>".
  MpResult bad = RunRanks(o, [](int, int, strataComm_t) -> std::string { return "init succeeded"; });
  ASSERT_EQ(bad.failures.size(), 3u) << bad.summary();
  for (const std::string& f : bad.failures) {
    EXPECT_NE(f.find("init failed"), std::string::npos) << f;
    EXPECT_NE(f.find("quantizes differently"), std::string::npos) << f;
  }
}

TEST(QuantCommSpec, MalformedConfigSpecFailsInit) {
  MpOptions o;
  o.nranks = 2;
  MpResult r = RunRanks(o, [](int rank, int, strataComm_t comm) -> std::string {
    strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
    cfg.quant = "int9:128";
    strataComm_t q = nullptr;
    if (strataCommSplit(comm, 0, rank, &q, &cfg) == strataSuccess) {
      strataCommDestroy(q);
      return "a malformed quant spec was accepted";
    }
    const std::string msg = strataGetLastError(comm);
    if (msg.find("config quant \"int9:128\"") == std::string::npos) return "message does not name the spec: " + msg;
    return "";
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

}  // namespace
}  // namespace test
}  // namespace strata
