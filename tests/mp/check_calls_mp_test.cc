// STRATA_CHECK_CALLS=1: ranks that disagree on a collective's kind, count, datatype, op, root or quantization all get
// strataInvalidUsage naming the field and the ranks, instead of a hang or wrong data, and the
// communicator stays usable.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

struct Mismatch {
  const char* name;
  int odd;             // the rank that calls differently
  const char* field;   // what every rank's message must name
  const char* detail;  // and how
};

void PrintTo(const Mismatch& m, std::ostream* os) { *os << m.name; }

// Runs one call; `odd` decides whether this rank takes the deviant variant.
strataResult_t Call(const std::string& name, bool odd, int n, strataComm_t comm) {
  std::vector<float> f(4 * 1024 * n, 1.0f), g(4 * 1024 * n, 0.0f);
  std::vector<int32_t> i32(4 * 1024, 1);
  const size_t count = 4 * 1024;
  if (name == "Count")
    return strataAllReduce(f.data(), g.data(), odd ? count / 2 : count, strataFloat32, strataSum, comm, nullptr);
  if (name == "Datatype")
    return odd ? strataAllReduce(i32.data(), i32.data(), count, strataInt32, strataSum, comm, nullptr)
               : strataAllReduce(f.data(), g.data(), count, strataFloat32, strataSum, comm, nullptr);
  if (name == "Op")
    return strataAllReduce(f.data(), g.data(), count, strataFloat32, odd ? strataMax : strataSum, comm, nullptr);
  if (name == "Root") return strataBroadcast(f.data(), f.data(), count, strataFloat32, odd ? 1 : 0, comm, nullptr);
  if (name == "Quantization") {
    // int8 and fp8 values are a byte each, with one fp32 scale per 128: the same bytes on the wire.
    strataQuantOptions_t q = STRATA_QUANT_OPTIONS_INITIALIZER;
    if (strataQuantOptionsParse(odd ? "fp8e4m3:128" : "int8:128", &q) != strataSuccess) return strataInternalError;
    return strataAllReduceEx(f.data(), g.data(), count, strataFloat32, strataSum, comm, nullptr, &q);
  }
  // Collective: an allgather of count/n elements per rank moves as many bytes as the allreduce.
  return odd ? strataAllGather(f.data(), g.data(), count / n, strataFloat32, comm, nullptr)
             : strataAllReduce(f.data(), g.data(), count, strataFloat32, strataSum, comm, nullptr);
}

class CheckCallsTest : public ::testing::TestWithParam<std::tuple<Mismatch, bool>> {};

TEST_P(CheckCallsTest, EveryRankNamesTheFieldAndTheCommunicatorStaysUsable) {
  const Mismatch m = std::get<0>(GetParam());
  MpOptions o;
  o.nranks = 4;
  o.tcp = std::get<1>(GetParam());
  o.commTimeoutMs = 10000;
  o.timeoutSec = 60;
  o.beforeInit = [](int) { setenv("STRATA_CHECK_CALLS", "1", 1); };
  const MpResult r = RunRanks(o, [m](int rank, int n, strataComm_t comm) -> std::string {
    const strataResult_t rc = Call(m.name, rank == m.odd, n, comm);
    const std::string msg = strataGetLastError(comm);
    std::string err;
    if (rc != strataInvalidUsage)
      err += "returned " + std::to_string(rc) + " (" + strataGetErrorString(rc) + "), want strataInvalidUsage: " + msg +
             "; ";
    for (const std::string& w : {std::string("disagree on the ") + m.field, std::string(m.detail)})
      if (msg.find(w) == std::string::npos) err += "message lacks \"" + w + "\": " + msg + "; ";
    // Nothing of the refused call moved: the next, matching one runs and is right.
    std::vector<int32_t> in(1000, rank + 1), out(1000, 0);
    const strataResult_t rc2 = strataAllReduce(in.data(), out.data(), in.size(), strataInt32, strataSum, comm, nullptr);
    if (rc2 != strataSuccess) err += std::string("the next allreduce failed: ") + strataGetLastError(comm) + "; ";
    else if (out[0] != n * (n + 1) / 2 || out[999] != n * (n + 1) / 2)
      err += "the next allreduce gave " + std::to_string(out[0]) + "; ";
    return err;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(
    Fields, CheckCallsTest,
    ::testing::Combine(::testing::Values(Mismatch{"Count", 2, "count", "rank 2 passed 2048"},
                                         Mismatch{"Datatype", 1, "datatype", "rank 1 passed int32"},
                                         Mismatch{"Op", 3, "op", "rank 3 passed max"},
                                         Mismatch{"Root", 0, "root", "rank 0 passed 1"},
                                         Mismatch{"Quantization", 1, "quantization",
                                                  "rank 1 passed fp8e4m3:128:fp32; ranks 0,2,3 passed int8:128:fp32"},
                                         Mismatch{"Collective", 1, "collective", "rank 1 passed AllGather"}),
                       ::testing::Values(false, true)),
    [](const ::testing::TestParamInfo<std::tuple<Mismatch, bool>>& info) {
      return std::string(std::get<0>(info.param).name) + (std::get<1>(info.param) ? "Tcp" : "Shm");
    });

// Without the knob on every rank, init refuses: the check adds a message to every call.
TEST(CheckCalls, MustBeSetOnEveryRank) {
  MpOptions o;
  o.nranks = 2;
  o.commTimeoutMs = 10000;
  o.timeoutSec = 60;
  o.beforeInit = [](int rank) {
    if (rank == 1) setenv("STRATA_CHECK_CALLS", "1", 1);
  };
  const MpResult r = RunRanks(o, [](int, int, strataComm_t) -> std::string { return "init succeeded"; });
  ASSERT_EQ(r.failures.size(), 2u) << r.summary();
  for (const std::string& f : r.failures) {
    EXPECT_NE(f.find("init failed"), std::string::npos) << f;
    EXPECT_NE(f.find("STRATA_CHECK_CALLS"), std::string::npos) << f;
  }
}

}  // namespace
}  // namespace test
}  // namespace strata
