// Every API entry point with bad input returns the right code and leaves a message in strataGetLastError()
// that names what was wrong. Most cases need no peers: a 1-rank communicator made in the test process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "mp/mp_harness.h"

namespace strata {
namespace test {
namespace {

// Out-of-range enum values as a C caller could pass them (opaque to the optimizer).
strataDataType_t Type(int v) {
  volatile int x = v;
  return static_cast<strataDataType_t>(x);
}
strataRedOp_t Op(int v) {
  volatile int x = v;
  return static_cast<strataRedOp_t>(x);
}

// Leaves a known message behind, so that a call that fails without setting its own cannot pass on a stale one.
void ResetLastError() { (void)strataGetVersion(nullptr); }

// "" when `rc` is `want` and the last error mentions every word; else what differs.
std::string CheckFails(strataResult_t rc, strataResult_t want, const std::vector<std::string>& words,
                       const char* call) {
  const std::string msg = strataGetLastError(nullptr);
  std::string err;
  if (rc != want)
    err += std::string(call) + " returned " + std::to_string(rc) + " (" + strataGetErrorString(rc) + "), want " +
           std::to_string(want) + " (" + strataGetErrorString(want) + "); last error: \"" + msg + "\"\n";
  for (const std::string& w : words)
    if (msg.find(w) == std::string::npos)
      err += std::string(call) + ": last error \"" + msg + "\" does not mention \"" + w + "\"\n";
  return err;
}

#define EXPECT_FAILS(call, code, ...)                                       \
  do {                                                                      \
    ResetLastError();                                                       \
    const strataResult_t rc_ = (call);                                      \
    const std::string err_ = CheckFails(rc_, (code), {__VA_ARGS__}, #call); \
    if (!err_.empty()) ADD_FAILURE() << err_;                               \
  } while (0)

// The same inside a forked rank, where failures travel back as text.
#define CHILD_EXPECT_FAILS(errs, call, code, ...)            \
  do {                                                       \
    ResetLastError();                                        \
    const strataResult_t rc_ = (call);                       \
    (errs) += CheckFails(rc_, (code), {__VA_ARGS__}, #call); \
  } while (0)

strataComm_t MakeOneRankComm() {
  strataUniqueId id;
  strataComm_t c = nullptr;
  if (strataGetUniqueId(&id) != strataSuccess || strataCommInitRank(&c, 1, id, 0) != strataSuccess) {
    ADD_FAILURE() << "could not make a 1-rank communicator: " << strataGetLastError(nullptr);
    return nullptr;
  }
  return c;
}

class OneRankComm : public ::testing::Test {
 protected:
  void SetUp() override {
    comm_ = MakeOneRankComm();
    ASSERT_NE(comm_, nullptr);
  }
  void TearDown() override {
    if (comm_) {
      EXPECT_EQ(strataCommDestroy(comm_), strataSuccess) << strataGetLastError(nullptr);
    }
  }
  strataComm_t comm_ = nullptr;
  float a_[16] = {}, b_[16] = {};
};

// Every entry point that takes a communicator, called with `c` and otherwise valid arguments; each must
// fail with `code` and a message that mentions every word.
void ExpectEveryCommCallFails(strataComm_t c, strataResult_t code, const std::vector<std::string>& words) {
  float a[4] = {}, b[4] = {};
  int n = 0;
  strataResult_t async = strataSuccess;
  strataComm_t sub = nullptr;
  EXPECT_FAILS(strataAllReduce(a, b, 1, strataFloat32, strataSum, c, nullptr), code, words);
  EXPECT_FAILS(strataBroadcast(a, b, 1, strataFloat32, 0, c, nullptr), code, words);
  EXPECT_FAILS(strataReduce(a, b, 1, strataFloat32, strataSum, 0, c, nullptr), code, words);
  EXPECT_FAILS(strataAllGather(a, b, 1, strataFloat32, c, nullptr), code, words);
  EXPECT_FAILS(strataReduceScatter(a, b, 1, strataFloat32, strataSum, c, nullptr), code, words);
  EXPECT_FAILS(strataAlltoAll(a, b, 1, strataFloat32, c, nullptr), code, words);
  EXPECT_FAILS(strataSend(a, 1, strataFloat32, 0, c, nullptr), code, words);
  EXPECT_FAILS(strataRecv(b, 1, strataFloat32, 0, c, nullptr), code, words);
  EXPECT_FAILS(strataBarrier(c), code, words);
  EXPECT_FAILS(strataCommSplit(c, 0, 0, &sub, nullptr), code, words);
  EXPECT_EQ(sub, nullptr);
  EXPECT_FAILS(strataCommCount(c, &n), code, words);
  EXPECT_FAILS(strataCommUserRank(c, &n), code, words);
  EXPECT_FAILS(strataCommGetAsyncError(c, &async), code, words);
  const char* name = nullptr;
  EXPECT_FAILS(strataCommGetLastAlgorithm(c, &name), code, words);
  EXPECT_EQ(name, nullptr);
}

// ---- the communicator itself ----

TEST(BadCommunicator, Null) {
  ExpectEveryCommCallFails(nullptr, strataInvalidArgument, {"communicator", "NULL"});
  EXPECT_FAILS(strataCommDestroy(nullptr), strataInvalidArgument, "communicator", "NULL");
  EXPECT_FAILS(strataCommAbort(nullptr), strataInvalidArgument, "communicator", "NULL");
}

TEST(BadCommunicator, NeverCreatedByStrata) {
  alignas(64) char fake[256] = {};
  const strataComm_t c = reinterpret_cast<strataComm_t>(fake);
  char addr[32];
  std::snprintf(addr, sizeof(addr), "%p", static_cast<void*>(fake));
  ExpectEveryCommCallFails(c, strataInvalidArgument, {"communicator", addr});
  EXPECT_FAILS(strataCommDestroy(c), strataInvalidArgument, "communicator", addr);
  EXPECT_FAILS(strataCommAbort(c), strataInvalidArgument, "communicator", addr);
}

TEST(BadCommunicator, Destroyed) {
  const strataComm_t c = MakeOneRankComm();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(strataCommDestroy(c), strataSuccess);
  ExpectEveryCommCallFails(c, strataInvalidUsage, {"destroyed"});
  EXPECT_FAILS(strataCommDestroy(c), strataInvalidUsage, "destroyed");
}

// A destroyed handle stays a tombstone so that later calls get a clear error; abort is one of those calls.
TEST(BadCommunicator, AbortAfterDestroy) {
  const strataComm_t c = MakeOneRankComm();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(strataCommDestroy(c), strataSuccess);
  EXPECT_FAILS(strataCommAbort(c), strataInvalidUsage, "destroyed");
}

TEST(BadCommunicator, Aborted) {
  const strataComm_t c = MakeOneRankComm();
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(strataCommAbort(c), strataSuccess);
  ExpectEveryCommCallFails(c, strataCommAborted, {"aborted"});
  EXPECT_EQ(strataCommAbort(c), strataSuccess) << "aborting twice should be harmless";
}

// ---- buffers ----

TEST_F(OneRankComm, NullBuffersWithACount) {
  float* const x = nullptr;
  EXPECT_FAILS(strataAllReduce(x, b_, 1, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument, "sendbuff",
               "NULL");
  EXPECT_FAILS(strataAllReduce(a_, x, 1, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument, "recvbuff",
               "NULL");
  // On a 1-rank communicator this rank is the root, so the root-only buffers are required too.
  EXPECT_FAILS(strataBroadcast(x, b_, 1, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "sendbuff", "NULL");
  EXPECT_FAILS(strataBroadcast(a_, x, 1, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "recvbuff", "NULL");
  EXPECT_FAILS(strataReduce(x, b_, 1, strataFloat32, strataSum, 0, comm_, nullptr), strataInvalidArgument, "sendbuff",
               "NULL");
  EXPECT_FAILS(strataReduce(a_, x, 1, strataFloat32, strataSum, 0, comm_, nullptr), strataInvalidArgument, "recvbuff",
               "NULL");
  EXPECT_FAILS(strataAllGather(x, b_, 1, strataFloat32, comm_, nullptr), strataInvalidArgument, "sendbuff", "NULL");
  EXPECT_FAILS(strataAllGather(a_, x, 1, strataFloat32, comm_, nullptr), strataInvalidArgument, "recvbuff", "NULL");
  EXPECT_FAILS(strataReduceScatter(x, b_, 1, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument,
               "sendbuff", "NULL");
  EXPECT_FAILS(strataReduceScatter(a_, x, 1, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument,
               "recvbuff", "NULL");
  EXPECT_FAILS(strataAlltoAll(x, b_, 1, strataFloat32, comm_, nullptr), strataInvalidArgument, "sendbuff", "NULL");
  EXPECT_FAILS(strataAlltoAll(a_, x, 1, strataFloat32, comm_, nullptr), strataInvalidArgument, "recvbuff", "NULL");
  EXPECT_FAILS(strataSend(x, 1, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "sendbuff", "NULL");
  EXPECT_FAILS(strataRecv(x, 1, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "recvbuff", "NULL");
}

TEST_F(OneRankComm, NullBuffersWithCountZeroAreAllowed) {
  EXPECT_EQ(strataAllReduce(nullptr, nullptr, 0, strataFloat32, strataSum, comm_, nullptr), strataSuccess)
      << strataGetLastError(comm_);
  EXPECT_EQ(strataBroadcast(nullptr, nullptr, 0, strataFloat32, 0, comm_, nullptr), strataSuccess)
      << strataGetLastError(comm_);
  EXPECT_EQ(strataReduce(nullptr, nullptr, 0, strataFloat32, strataSum, 0, comm_, nullptr), strataSuccess)
      << strataGetLastError(comm_);
  EXPECT_EQ(strataAllGather(nullptr, nullptr, 0, strataFloat32, comm_, nullptr), strataSuccess)
      << strataGetLastError(comm_);
  EXPECT_EQ(strataReduceScatter(nullptr, nullptr, 0, strataFloat32, strataSum, comm_, nullptr), strataSuccess)
      << strataGetLastError(comm_);
  EXPECT_EQ(strataAlltoAll(nullptr, nullptr, 0, strataFloat32, comm_, nullptr), strataSuccess)
      << strataGetLastError(comm_);
  ASSERT_EQ(strataGroupStart(), strataSuccess);
  EXPECT_EQ(strataSend(nullptr, 0, strataFloat32, 0, comm_, nullptr), strataSuccess) << strataGetLastError(comm_);
  EXPECT_EQ(strataRecv(nullptr, 0, strataFloat32, 0, comm_, nullptr), strataSuccess) << strataGetLastError(comm_);
  EXPECT_EQ(strataGroupEnd(), strataSuccess) << strataGetLastError(comm_);
}

// ---- datatype, op, root, peer ----

TEST_F(OneRankComm, UnknownDatatype) {
  for (int bad : {-1, static_cast<int>(strataNumTypes)}) {
    SCOPED_TRACE("datatype " + std::to_string(bad));
    const std::string v = std::to_string(bad);
    const strataDataType_t t = Type(bad);
    EXPECT_FAILS(strataAllReduce(a_, b_, 1, t, strataSum, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataBroadcast(a_, b_, 1, t, 0, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataReduce(a_, b_, 1, t, strataSum, 0, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataAllGather(a_, b_, 1, t, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataReduceScatter(a_, b_, 1, t, strataSum, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataAlltoAll(a_, b_, 1, t, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataSend(a_, 1, t, 0, comm_, nullptr), strataInvalidArgument, "datatype", v);
    EXPECT_FAILS(strataRecv(b_, 1, t, 0, comm_, nullptr), strataInvalidArgument, "datatype", v);
  }
}

TEST_F(OneRankComm, UnknownOp) {
  for (int bad : {-1, static_cast<int>(strataNumOps)}) {
    SCOPED_TRACE("op " + std::to_string(bad));
    const std::string v = std::to_string(bad);
    const strataRedOp_t op = Op(bad);
    EXPECT_FAILS(strataAllReduce(a_, b_, 1, strataFloat32, op, comm_, nullptr), strataInvalidArgument, "op", v);
    EXPECT_FAILS(strataReduce(a_, b_, 1, strataFloat32, op, 0, comm_, nullptr), strataInvalidArgument, "op", v);
    EXPECT_FAILS(strataReduceScatter(a_, b_, 1, strataFloat32, op, comm_, nullptr), strataInvalidArgument, "op", v);
  }
}

TEST_F(OneRankComm, RootOutOfRange) {
  for (int bad : {-1, 1}) {
    SCOPED_TRACE("root " + std::to_string(bad));
    const std::string v = "root " + std::to_string(bad);
    EXPECT_FAILS(strataBroadcast(a_, b_, 1, strataFloat32, bad, comm_, nullptr), strataInvalidArgument, v);
    EXPECT_FAILS(strataReduce(a_, b_, 1, strataFloat32, strataSum, bad, comm_, nullptr), strataInvalidArgument, v);
  }
}

TEST_F(OneRankComm, PeerOutOfRange) {
  for (int bad : {-1, 1}) {
    SCOPED_TRACE("peer " + std::to_string(bad));
    const std::string v = "peer " + std::to_string(bad);
    EXPECT_FAILS(strataSend(a_, 1, strataFloat32, bad, comm_, nullptr), strataInvalidArgument, v);
    EXPECT_FAILS(strataRecv(b_, 1, strataFloat32, bad, comm_, nullptr), strataInvalidArgument, v);
    // Inside a group the call is refused at once and nothing is queued.
    ASSERT_EQ(strataGroupStart(), strataSuccess);
    EXPECT_FAILS(strataSend(a_, 1, strataFloat32, bad, comm_, nullptr), strataInvalidArgument, v);
    EXPECT_EQ(strataGroupEnd(), strataSuccess) << strataGetLastError(comm_);
  }
}

// ---- sizes ----

TEST_F(OneRankComm, ByteSizeOverflowsSizeT) {
  const size_t n = SIZE_MAX / 2;  // x 4 bytes of fp32 wraps
  EXPECT_FAILS(strataAllReduce(a_, b_, n, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument, "overflow");
  EXPECT_FAILS(strataBroadcast(a_, b_, n, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "overflow");
  EXPECT_FAILS(strataReduce(a_, b_, n, strataFloat32, strataSum, 0, comm_, nullptr), strataInvalidArgument, "overflow");
  EXPECT_FAILS(strataSend(a_, n, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "overflow");
  EXPECT_FAILS(strataRecv(b_, n, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "overflow");
  // SIZE_MAX / (2 * nranks) + 1 fp16 elements times nranks wraps.
  const size_t m = SIZE_MAX / 2 + 1;
  EXPECT_FAILS(strataAllGather(a_, b_, m, strataFloat16, comm_, nullptr), strataInvalidArgument, "overflow");
  EXPECT_FAILS(strataReduceScatter(a_, b_, m, strataFloat16, strataSum, comm_, nullptr), strataInvalidArgument,
               "overflow");
  EXPECT_FAILS(strataAlltoAll(a_, b_, m, strataFloat16, comm_, nullptr), strataInvalidArgument, "overflow");
}

// A negative count from C arrives as a huge size_t; with 1-byte types its byte size does not wrap, but no buffer
// holds more than PTRDIFF_MAX bytes.
TEST_F(OneRankComm, NegativeCountOfBytes) {
  volatile long minusOne = -1;  // as a C caller's int or long
  const size_t n = static_cast<size_t>(minusOne), half = static_cast<size_t>(PTRDIFF_MAX) + 1;
  for (strataDataType_t t : {strataInt8, strataUint8, strataFloat8e4m3}) {
    SCOPED_TRACE(std::string("datatype ") + std::to_string(t));
    for (size_t c : {n, half}) {
      EXPECT_FAILS(strataAllReduce(a_, b_, c, t, strataSum, comm_, nullptr), strataInvalidArgument, "negative count");
      EXPECT_FAILS(strataAllReduce(a_, a_, c, t, strataSum, comm_, nullptr), strataInvalidArgument, "overflow");
      EXPECT_FAILS(strataBroadcast(a_, b_, c, t, 0, comm_, nullptr), strataInvalidArgument, "overflow");
      EXPECT_FAILS(strataReduce(a_, b_, c, t, strataSum, 0, comm_, nullptr), strataInvalidArgument, "overflow");
      EXPECT_FAILS(strataSend(a_, c, t, 0, comm_, nullptr), strataInvalidArgument, "overflow");
      EXPECT_FAILS(strataRecv(b_, c, t, 0, comm_, nullptr), strataInvalidArgument, "overflow");
    }
  }
  // The largest size that fits is not refused for its size: PTRDIFF_MAX bytes, here only checked, never run (the
  // buffers overlap, which is refused after the size).
  EXPECT_FAILS(strataAllReduce(a_, a_ + 1, half - 1, strataInt8, strataSum, comm_, nullptr), strataInvalidArgument,
               "overlap");
}

// ---- overlapping buffers ----

TEST_F(OneRankComm, OverlapOtherThanInPlace) {
  EXPECT_FAILS(strataAllReduce(a_, a_ + 1, 4, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument,
               "AllReduce", "overlap", "recvbuff +4 bytes from sendbuff", "not in place");
  EXPECT_FAILS(strataAllReduce(a_ + 3, a_, 4, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument,
               "recvbuff -12 bytes from sendbuff");
  EXPECT_FAILS(strataBroadcast(a_, a_ + 2, 4, strataFloat32, 0, comm_, nullptr), strataInvalidArgument, "Broadcast",
               "overlap");
  EXPECT_FAILS(strataReduce(a_ + 2, a_, 4, strataFloat32, strataSum, 0, comm_, nullptr), strataInvalidArgument,
               "Reduce", "overlap");
  EXPECT_FAILS(strataAllGather(a_ + 1, a_, 4, strataFloat32, comm_, nullptr), strataInvalidArgument, "AllGather",
               "sendbuff == recvbuff + rank * sendcount");
  EXPECT_FAILS(strataReduceScatter(a_, a_ + 1, 4, strataFloat32, strataSum, comm_, nullptr), strataInvalidArgument,
               "ReduceScatter", "recvbuff == sendbuff + rank * recvcount");
  EXPECT_FAILS(strataAlltoAll(a_, a_ + 1, 4, strataFloat32, comm_, nullptr), strataInvalidArgument, "AlltoAll",
               "overlap");
  // Adjacent buffers do not overlap; the in-place forms run (one rank: the forms with rank 0), and so does AlltoAll
  // onto itself on one rank, a copy of the buffer onto itself.
  for (int i = 0; i < 16; ++i) a_[i] = static_cast<float>(i + 1);
  EXPECT_EQ(strataAllReduce(a_, a_ + 4, 4, strataFloat32, strataSum, comm_, nullptr), strataSuccess);
  EXPECT_EQ(a_[7], 4.0f);
  EXPECT_EQ(strataAllReduce(a_, a_, 4, strataFloat32, strataMax, comm_, nullptr), strataSuccess);
  EXPECT_EQ(strataAllGather(a_, a_, 4, strataFloat32, comm_, nullptr), strataSuccess);
  EXPECT_EQ(strataReduceScatter(a_, a_, 4, strataFloat32, strataSum, comm_, nullptr), strataSuccess);
  EXPECT_EQ(strataAlltoAll(a_, a_, 4, strataFloat32, comm_, nullptr), strataSuccess) << strataGetLastError(comm_);
  EXPECT_EQ(a_[3], 4.0f);
  // A NULL buffer with a count of 0 overlaps nothing.
  EXPECT_EQ(strataAllReduce(nullptr, a_, 0, strataFloat32, strataSum, comm_, nullptr), strataSuccess);
}

// With 2 ranks: counts whose bytes fit but whose nranks-fold buffers do not, and the root-only buffers that
// may be NULL on the other ranks (as in NCCL).
// `fn` on every rank of a communicator of `nranks` processes; its failures as the test's.
void ExpectOnRanks(int nranks, const RankFn& fn) {
  MpOptions o;
  o.nranks = nranks;
  const MpResult r = RunRanks(o, fn);
  EXPECT_TRUE(r.ok()) << r.summary();
}

TEST(BadInputTwoRanks, SizesAndRootOnlyBuffers) {
  ExpectOnRanks(2, [](int rank, int n, strataComm_t comm) -> std::string {
    std::string errs;
    float a[4] = {1, 2, 3, 4}, b[8] = {};
    const size_t m = SIZE_MAX / (2 * n) + 1;  // m * 2 bytes fits; m * 2 * n does not
    // Refused by every rank before anything moves, so no rank waits for another.
    CHILD_EXPECT_FAILS(errs, strataAllGather(a, b, m, strataFloat16, comm, nullptr), strataInvalidArgument, "overflow");
    CHILD_EXPECT_FAILS(errs, strataReduceScatter(a, b, m, strataFloat16, strataSum, comm, nullptr),
                       strataInvalidArgument, "overflow");
    CHILD_EXPECT_FAILS(errs, strataAlltoAll(a, b, m, strataFloat16, comm, nullptr), strataInvalidArgument, "overflow");
    CHILD_EXPECT_FAILS(errs, strataSend(a, 1, strataFloat32, n, comm, nullptr), strataInvalidArgument,
                       "peer " + std::to_string(n));
    CHILD_EXPECT_FAILS(errs, strataBroadcast(a, b, 1, strataFloat32, n, comm, nullptr), strataInvalidArgument,
                       "root " + std::to_string(n));
    // Broadcast reads sendbuff only on the root, Reduce writes recvbuff only on the root.
    strataResult_t rc = strataBroadcast(rank == 0 ? a : nullptr, b, 4, strataFloat32, 0, comm, nullptr);
    if (rc != strataSuccess)
      errs += std::string("Broadcast with NULL sendbuff on a non-root: ") + strataGetLastError(comm) + "\n";
    else if (b[3] != 4)
      errs += "Broadcast with NULL sendbuff on a non-root gave a wrong result\n";
    rc = strataReduce(a, rank == 1 ? b : nullptr, 4, strataFloat32, strataSum, 1, comm, nullptr);
    if (rc != strataSuccess)
      errs += std::string("Reduce with NULL recvbuff on a non-root: ") + strataGetLastError(comm) + "\n";
    else if (rank == 1 && b[3] != 8)
      errs += "Reduce with NULL recvbuff on a non-root gave a wrong result\n";
    // Overlaps other than the in-place forms, which with 2 ranks place the block at this rank's offset: the other
    // rank's offset is refused, on every rank before anything moves.
    float buf[16] = {};
    const int other = 1 - rank;
    CHILD_EXPECT_FAILS(errs, strataAllGather(buf + 4 * other, buf, 4, strataFloat32, comm, nullptr),
                       strataInvalidArgument, "AllGather", "not in place");
    CHILD_EXPECT_FAILS(errs, strataReduceScatter(buf, buf + 4 * other, 4, strataFloat32, strataSum, comm, nullptr),
                       strataInvalidArgument, "ReduceScatter", "not in place");
    CHILD_EXPECT_FAILS(errs, strataAlltoAll(buf, buf + 4, 4, strataFloat32, comm, nullptr), strataInvalidArgument,
                       "AlltoAll", "overlap");
    CHILD_EXPECT_FAILS(errs, strataAlltoAll(buf, buf, 4, strataFloat32, comm, nullptr), strataInvalidArgument,
                       "AlltoAll cannot run in place");
    // The in-place allgather at this rank's offset runs and is right.
    for (int i = 0; i < 4; ++i) buf[4 * rank + i] = static_cast<float>(10 * rank + i);
    rc = strataAllGather(buf + 4 * rank, buf, 4, strataFloat32, comm, nullptr);
    if (rc != strataSuccess)
      errs += std::string("in-place AllGather: ") + strataGetLastError(comm) + "\n";
    else if (buf[0] != 0 || buf[3] != 3 || buf[4] != 10 || buf[7] != 13)
      errs += "in-place AllGather gave a wrong result\n";
    return errs;
  });
}

// Two threads of rank 0 in calls on one communicator at once: rank 1 joins only after half a second, so both threads
// are in their allreduce by then. One call runs (the sum is right once rank 1 joins), the other fails at once with
// strataInvalidUsage, saying so on its own thread; the communicator works on after, from either thread in turn.
TEST(BadInputTwoRanks, TwoThreadsInCallsOnOneCommunicator) {
  ExpectOnRanks(2, [](int rank, int, strataComm_t comm) -> std::string {
    std::string errs;
    if (rank == 1) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      int32_t in = 10, out = 0;
      if (strataAllReduce(&in, &out, 1, strataInt32, strataSum, comm, nullptr) != strataSuccess || out != 11)
        errs += std::string("rank 1's allreduce: ") + strataGetLastError(comm) + "\n";
    } else {
      struct Outcome {
        strataResult_t rc = strataInternalError;
        int32_t out = 0;
        std::string error;
      } outcome[2];
      std::vector<std::thread> threads;
      for (Outcome& t : outcome)
        threads.emplace_back([&comm, &t] {
          int32_t in = 1;
          t.rc = strataAllReduce(&in, &t.out, 1, strataInt32, strataSum, comm, nullptr);
          t.error = strataGetLastError(nullptr);
        });
      for (std::thread& t : threads) t.join();
      const int ran = outcome[0].rc == strataSuccess ? 0 : 1, refused = 1 - ran;
      if (outcome[ran].rc != strataSuccess || outcome[ran].out != 11)
        errs += "no thread's allreduce ran and summed 11: " + outcome[0].error + " / " + outcome[1].error + "\n";
      if (outcome[refused].rc != strataInvalidUsage ||
          outcome[refused].error.find("another thread is in a call on this communicator") == std::string::npos)
        errs += "the other thread's call returned " + std::to_string(outcome[refused].rc) + ": \"" +
                outcome[refused].error + "\"\n";
    }
    // Afterwards: one call a thread, in turn.
    for (int turn = 0; turn < 2 && errs.empty(); ++turn) {
      std::thread t([&] {
        int32_t in = rank + turn, out = 0;
        if (strataAllReduce(&in, &out, 1, strataInt32, strataSum, comm, nullptr) != strataSuccess ||
            out != 1 + 2 * turn)
          errs += "turn " + std::to_string(turn) + ": " + strataGetLastError(nullptr) + "\n";
      });
      t.join();
    }
    return errs;
  });
}

// A process forked from a rank after init shares the rank's sockets and shared memory: its calls, destroy and abort on
// the inherited communicator are refused, saying why, and leave the parent's communicator as it was (the parent's
// allreduce afterwards is right). Queries still answer.
TEST(BadInputTwoRanks, AChildForkedAfterInitCannotUseTheCommunicator) {
  ExpectOnRanks(2, [](int rank, int, strataComm_t comm) -> std::string {
    std::string errs;
    if (rank == 0) {
      const pid_t child = fork();
      if (child == 0) {
        std::string childErrs;
        int32_t in = 5, out = 0;
        CHILD_EXPECT_FAILS(childErrs, strataAllReduce(&in, &out, 1, strataInt32, strataSum, comm, nullptr),
                           strataInvalidUsage, "forked from it", "make a communicator of its own");
        CHILD_EXPECT_FAILS(childErrs, strataSend(&in, 1, strataInt32, 1, comm, nullptr), strataInvalidUsage,
                           "forked from it");
        CHILD_EXPECT_FAILS(childErrs, strataCommDestroy(comm), strataInvalidUsage, "strataCommDestroy", "forked");
        CHILD_EXPECT_FAILS(childErrs, strataCommAbort(comm), strataInvalidUsage, "strataCommAbort", "forked");
        int n = 0;
        if (strataCommCount(comm, &n) != strataSuccess || n != 2) childErrs += "strataCommCount in the child\n";
        if (!childErrs.empty()) fprintf(stderr, "%s", childErrs.c_str());
        _exit(childErrs.empty() ? 0 : 1);
      }
      int status = 0;
      if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        errs += "the forked child's checks failed (its messages are on stderr)\n";
    }
    int32_t in = rank + 1, out = 0;
    if (strataAllReduce(&in, &out, 1, strataInt32, strataSum, comm, nullptr) != strataSuccess || out != 3)
      errs += std::string("the allreduce after the child: ") + strataGetLastError(comm) + "\n";
    return errs;
  });
}

// ---- groups ----

TEST(BadGroup, EndWithoutStart) {
  EXPECT_FAILS(strataGroupEnd(), strataInvalidUsage, "strataGroupStart");
  // Nesting counts: the second end closes the group, the third has no start.
  ASSERT_EQ(strataGroupStart(), strataSuccess);
  ASSERT_EQ(strataGroupStart(), strataSuccess);
  EXPECT_EQ(strataGroupEnd(), strataSuccess);
  EXPECT_EQ(strataGroupEnd(), strataSuccess);
  EXPECT_FAILS(strataGroupEnd(), strataInvalidUsage, "strataGroupStart");
}

// A barrier inside a group is queued like the other calls and runs at strataGroupEnd, on buffers of its own: the
// frame of the strataBarrier call is gone by then.
TEST(Group, BarrierRunsAtGroupEnd) {
  ExpectOnRanks(3, [](int rank, int n, strataComm_t comm) -> std::string {
    std::string errs;
    constexpr int kLateMs = 400;
    const auto MonotonicMs = [] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    if (rank == 2) std::this_thread::sleep_for(std::chrono::milliseconds(kLateMs));
    const int64_t start = MonotonicMs();
    if (strataGroupStart() != strataSuccess) return "strataGroupStart failed";
    int32_t in[8], out[8] = {};
    for (int i = 0; i < 8; ++i) in[i] = rank + i;
    strataResult_t rc = strataBarrier(comm);
    const int64_t queued = MonotonicMs() - start;
    if (rc != strataSuccess) errs += std::string("strataBarrier in a group: ") + strataGetLastError(comm) + "\n";
    rc = strataAllReduce(in, out, 8, strataInt32, strataSum, comm, nullptr);
    if (rc != strataSuccess) errs += std::string("strataAllReduce in a group: ") + strataGetLastError(comm) + "\n";
    rc = strataBarrier(comm);
    if (rc != strataSuccess) errs += std::string("second strataBarrier: ") + strataGetLastError(comm) + "\n";
    rc = strataGroupEnd();
    const int64_t took = MonotonicMs() - start;
    if (rc != strataSuccess) return errs + "strataGroupEnd: " + strataGetLastError(comm);
    for (int i = 0; i < 8; ++i)
      if (out[i] != n * (n - 1) / 2 + n * i) errs += "allreduce element " + std::to_string(i) + " is wrong\n";
    // Queued, the barrier returns at once; rank 0 leaves strataGroupEnd only once the late rank is in.
    if (queued > 250) errs += "strataBarrier in a group took " + std::to_string(queued) + " ms\n";
    if (rank == 0 && took < kLateMs - 100)
      errs += "rank 0 left the group after " + std::to_string(took) + " ms, before the late rank arrived\n";
    return errs;
  });
}

// A group's sends and receives on one communicator: up to 32768 of them run, one more is refused on the rank that
// queued it (before anything moves: here both ranks queue as many).
TEST(Group, SendRecvOperationsUpToTheLimit) {
  ExpectOnRanks(2, [](int rank, int, strataComm_t comm) -> std::string {
    std::string errs;
    const int peer = 1 - rank;
    constexpr int kEach = 16384;  // sends and as many receives: 32768 operations
    std::vector<int32_t> out(kEach + 1), in(kEach + 1, -1);
    for (int i = 0; i <= kEach; ++i) out[i] = 100000 * rank + i;
    for (int extra : {0, 1}) {
      std::fill(in.begin(), in.end(), -1);
      if (strataGroupStart() != strataSuccess) return "strataGroupStart failed";
      for (int i = 0; i < kEach + extra; ++i) {
        (void)strataSend(&out[i], 1, strataInt32, peer, comm, nullptr);
        if (i < kEach) (void)strataRecv(&in[i], 1, strataInt32, peer, comm, nullptr);
      }
      ResetLastError();
      const strataResult_t rc = strataGroupEnd();
      if (extra == 0) {
        if (rc != strataSuccess) errs += std::string("32768 operations: ") + strataGetLastError(comm) + "\n";
        for (int i = 0; i < kEach && errs.empty(); ++i)
          if (in[i] != 100000 * peer + i)
            errs += "receive " + std::to_string(i) + " got " + std::to_string(in[i]) + "\n";
      } else {
        errs += CheckFails(rc, strataInvalidUsage, {"32769 send/recv operations", "at most 32768"}, "strataGroupEnd");
        if (in[0] != -1) errs += "the refused group moved data\n";
      }
    }
    return errs;
  });
}

// ---- init ----

TEST(BadInit, InitRankArguments) {
  strataUniqueId id;
  ASSERT_EQ(strataGetUniqueId(&id), strataSuccess) << strataGetLastError(nullptr);
  strataComm_t c = nullptr;
  EXPECT_FAILS(strataCommInitRank(&c, 0, id, 0), strataInvalidArgument, "nranks", "0");
  EXPECT_FAILS(strataCommInitRank(&c, -3, id, 0), strataInvalidArgument, "nranks", "-3");
  EXPECT_FAILS(strataCommInitRank(&c, 2, id, 2), strataInvalidArgument, "rank 2");
  EXPECT_FAILS(strataCommInitRank(&c, 2, id, -1), strataInvalidArgument, "rank -1");
  // Refused before anything is sized by the rank count.
  EXPECT_FAILS(strataCommInitRank(&c, 65537, id, 0), strataInvalidArgument, "65537 ranks", "more than strata supports");
  EXPECT_FAILS(strataCommInitRank(&c, INT32_MAX, id, 0), strataInvalidArgument, "more than strata supports");
  EXPECT_EQ(c, nullptr);
  EXPECT_FAILS(strataCommInitRank(nullptr, 1, id, 0), strataInvalidArgument, "NULL");
  strataUniqueId zeros;
  std::memset(&zeros, 0, sizeof(zeros));
  EXPECT_FAILS(strataCommInitRank(&c, 1, zeros, 0), strataInvalidArgument, "unique id");
  EXPECT_FAILS(strataGetUniqueId(nullptr), strataInvalidArgument, "NULL");
}

TEST(BadInit, ConfigNotFromInitializer) {
  strataUniqueId id;
  ASSERT_EQ(strataGetUniqueId(&id), strataSuccess) << strataGetLastError(nullptr);
  strataComm_t c = nullptr;
  strataConfig_t garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &garbage), strataInvalidArgument, "STRATA_CONFIG_INITIALIZER");
  strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
  cfg.timeoutMs = 0;
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &cfg), strataInvalidArgument, "timeout");
  cfg = STRATA_CONFIG_INITIALIZER;
  cfg.nChannels = 17;
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &cfg), strataInvalidArgument, "channel", "17");
  cfg = STRATA_CONFIG_INITIALIZER;
  cfg.nSocketsPerPeer = 0;
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &cfg), strataInvalidArgument, "sockets");
  EXPECT_EQ(c, nullptr);
}

TEST_F(OneRankComm, SplitArguments) {
  strataComm_t sub = nullptr;
  EXPECT_FAILS(strataCommSplit(comm_, -5, 0, &sub, nullptr), strataInvalidArgument, "color", "-5");
  EXPECT_FAILS(strataCommSplit(comm_, 0, 0, nullptr, nullptr), strataInvalidArgument, "newcomm");
  strataConfig_t garbage;
  std::memset(&garbage, 0x5a, sizeof(garbage));
  EXPECT_FAILS(strataCommSplit(comm_, 0, 0, &sub, &garbage), strataInvalidArgument, "STRATA_CONFIG_INITIALIZER");
  EXPECT_EQ(sub, nullptr);
}

// In a forked process, since it changes the environment.
TEST(BadInit, FromEnvironment) {
  MpOptions o;
  o.nranks = 1;
  const MpResult r = RunProcesses(o, [](int, int, strataComm_t) -> std::string {
    std::string errs;
    for (const char* v : {"STRATA_RANK", "STRATA_NRANKS", "STRATA_ROOT_ADDR", "STRATA_SECRET", "RANK", "WORLD_SIZE",
                          "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"})
      unsetenv(v);
    strataComm_t c = nullptr;
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(nullptr, nullptr), strataInvalidArgument, "NULL");
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(&c, nullptr), strataInvalidArgument, "launcher");
    setenv("STRATA_RANK", "abc", 1);
    setenv("STRATA_NRANKS", "2", 1);
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(&c, nullptr), strataInvalidArgument, "STRATA_RANK", "abc");
    setenv("STRATA_RANK", "0", 1);
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(&c, nullptr), strataInvalidArgument, "STRATA_ROOT_ADDR");
    setenv("STRATA_ROOT_ADDR", "127.0.0.1:1", 1);
    setenv("STRATA_RANK", "3", 1);
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(&c, nullptr), strataInvalidArgument, "rank 3 of 2");
    setenv("STRATA_RANK", "0", 1);
    setenv("STRATA_SECRET", "zz", 1);
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(&c, nullptr), strataInvalidArgument, "STRATA_SECRET");
    unsetenv("STRATA_SECRET");
    strataConfig_t garbage;
    std::memset(&garbage, 0x5a, sizeof(garbage));
    CHILD_EXPECT_FAILS(errs, strataCommInitFromEnv(&c, &garbage), strataInvalidArgument, "STRATA_CONFIG_INITIALIZER");
    if (c != nullptr) errs += "a failed strataCommInitFromEnv left a communicator\n";
    // A malformed STRATA_ALGO fails init with the reason.
    strataUniqueId id;
    if (strataGetUniqueId(&id) != strataSuccess) return errs + "strataGetUniqueId: " + strataGetLastError(nullptr);
    setenv("STRATA_ALGO", "broadcast:rabbit", 1);
    CHILD_EXPECT_FAILS(errs, strataCommInitRank(&c, 1, id, 0), strataInvalidArgument, "STRATA_ALGO",
                       "unknown algorithm 'rabbit'");
    unsetenv("STRATA_ALGO");
    setenv("STRATA_SLOT_STORES", "fast", 1);
    CHILD_EXPECT_FAILS(errs, strataCommInitRank(&c, 1, id, 0), strataInvalidArgument, "STRATA_SLOT_STORES", "\"fast\"",
                       "auto, cached or streaming");
    unsetenv("STRATA_SLOT_STORES");
    if (c != nullptr) errs += "a failed strataCommInitRank left a communicator\n";
    return errs;
  });
  EXPECT_TRUE(r.ok()) << r.summary();
}

// ---- queries and strings ----

TEST(BadQuery, NullOutputPointers) {
  (void)strataGroupEnd();  // a different last error than the one expected below
  EXPECT_EQ(strataGetVersion(nullptr), strataInvalidArgument);
  EXPECT_NE(std::string(strataGetLastError(nullptr)).find("version"), std::string::npos) << strataGetLastError(nullptr);
  int v = 0;
  EXPECT_EQ(strataGetVersion(&v), strataSuccess);
  EXPECT_EQ(v, STRATA_VERSION);

  const strataComm_t c = MakeOneRankComm();
  ASSERT_NE(c, nullptr);
  EXPECT_FAILS(strataCommCount(c, nullptr), strataInvalidArgument, "count", "NULL");
  EXPECT_FAILS(strataCommUserRank(c, nullptr), strataInvalidArgument, "rank", "NULL");
  EXPECT_FAILS(strataCommGetAsyncError(c, nullptr), strataInvalidArgument, "asyncError", "NULL");
  EXPECT_FAILS(strataCommGetLastAlgorithm(c, nullptr), strataInvalidArgument, "name", "NULL");
  EXPECT_EQ(strataCommDestroy(c), strataSuccess);
}

// ---- forced algorithms (the config field and STRATA_ALGO) ----

TEST(BadInit, ConfigAlgorithm) {
  strataUniqueId id;
  ASSERT_EQ(strataGetUniqueId(&id), strataSuccess) << strataGetLastError(nullptr);
  strataComm_t c = nullptr;
  strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
  cfg.algorithm = "allreduce:ringg";
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &cfg), strataInvalidArgument, "unknown algorithm 'ringg'");
  cfg.algorithm = "allgather:tree";
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &cfg), strataInvalidArgument, "'tree'", "allgather");
  cfg.algorithm = "allreduce:ring;allreduce:tree";
  EXPECT_FAILS(strataCommInitRankConfig(&c, 1, id, 0, &cfg), strataInvalidArgument, "allreduce is named twice");
  EXPECT_EQ(c, nullptr);
}

TEST_F(OneRankComm, SplitWithBadAlgorithm) {
  strataComm_t sub = nullptr;
  strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
  cfg.algorithm = "sideways";
  EXPECT_FAILS(strataCommSplit(comm_, 0, 0, &sub, &cfg), strataInvalidArgument, "unknown algorithm 'sideways'");
  EXPECT_EQ(sub, nullptr);
}

// ---- quantization options ----

TEST(BadQuant, OptionsParse) {
  strataQuantOptions_t o = STRATA_QUANT_OPTIONS_INITIALIZER;
  EXPECT_FAILS(strataQuantOptionsParse(nullptr, &o), strataInvalidArgument, "spec", "NULL");
  EXPECT_FAILS(strataQuantOptionsParse("int8", nullptr), strataInvalidArgument, "options", "NULL");
  strataQuantOptions_t raw;
  std::memset(&raw, 0x5a, sizeof(raw));
  EXPECT_FAILS(strataQuantOptionsParse("int8", &raw), strataInvalidArgument, "STRATA_QUANT_OPTIONS_INITIALIZER");
  strataQuantOptions_t small = STRATA_QUANT_OPTIONS_INITIALIZER;
  small.size = 8;
  EXPECT_FAILS(strataQuantOptionsParse("int8", &small), strataInvalidArgument, "STRATA_QUANT_OPTIONS_INITIALIZER");

  // A malformed spec leaves the options exactly as they were.
  ASSERT_EQ(strataQuantOptionsParse("int4:64:fp16", &o), strataSuccess) << strataGetLastError(nullptr);
  strataQuantOptions_t before;
  std::memcpy(&before, &o, sizeof(o));
  EXPECT_FAILS(strataQuantOptionsParse("int9", &o), strataInvalidArgument, "unknown format 'int9'");
  EXPECT_FAILS(strataQuantOptionsParse("int8:48", &o), strataInvalidArgument, "block size '48'");
  EXPECT_FAILS(strataQuantOptionsParse("", &o), strataInvalidArgument, "empty");
  EXPECT_FAILS(strataQuantOptionsParse("int8::fp16", &o), strataInvalidArgument, "field 2 is empty");
  // Far longer than any spec: refused, not read past its end.
  const std::string longSpec = "int8:128:fp32:stochastic:" + std::string(10000, '7');
  EXPECT_FAILS(strataQuantOptionsParse(longSpec.c_str(), &o), strataInvalidArgument, "longer than any valid spec");
  EXPECT_EQ(std::memcmp(&before, &o, sizeof(o)), 0) << "a failed parse changed the options";
}

TEST(ErrorStrings, EveryCodeHasOne) {
  const std::string unknown = strataGetErrorString(static_cast<strataResult_t>(99));
  EXPECT_FALSE(unknown.empty());
  for (int code = 0; code < strataNumResults; ++code) {
    const char* s = strataGetErrorString(static_cast<strataResult_t>(code));
    ASSERT_NE(s, nullptr) << code;
    EXPECT_GT(std::strlen(s), 0u) << code;
  }
  // The codes strata defines each have their own text.
  for (strataResult_t code :
       {strataSuccess, strataUnhandledCudaError, strataSystemError, strataInternalError, strataInvalidArgument,
        strataInvalidUsage, strataRemoteError, strataInProgress, strataTimeout, strataCommAborted})
    EXPECT_NE(strataGetErrorString(code), unknown) << code;
  EXPECT_FALSE(std::string(strataGetErrorString(static_cast<strataResult_t>(-1))).empty());
}

}  // namespace
}  // namespace test
}  // namespace strata
