// The STRATA_ALGO parser: good strings give the forced table expected here, bad ones a clear error.
#include <gtest/gtest.h>

#include <string>

#include "algorithms/algo_spec.h"

namespace strata {
namespace {

ForcedAlgos Parse(const std::string& text) {
  ForcedAlgos f;
  Status st = ParseAlgoSpec(text, &f);
  EXPECT_TRUE(st.ok()) << "'" << text << "': " << st.message();
  return f;
}

std::string Error(const std::string& text) {
  ForcedAlgos f;
  f.algo[0] = 3;  // must be left alone on error
  Status st = ParseAlgoSpec(text, &f);
  EXPECT_FALSE(st.ok()) << "'" << text << "' was accepted";
  EXPECT_EQ(st.code(), strataInvalidArgument) << text;
  EXPECT_EQ(f.algo[0], 3) << text;
  return st.message();
}

TEST(AlgoSpec, EmptyForcesNothing) {
  EXPECT_FALSE(Parse("").any());
  EXPECT_FALSE(Parse("  \t ").any());
}

TEST(AlgoSpec, PerCollectiveEntries) {
  const ForcedAlgos f = Parse("allreduce:ring;broadcast:tree");
  EXPECT_EQ(f.toString(), "allreduce:ring;broadcast:tree");
  AlgoId id;
  ASSERT_TRUE(f.get(CollKind::AllReduce, &id));
  EXPECT_EQ(id, AlgoId::Ring);
  ASSERT_TRUE(f.get(CollKind::Broadcast, &id));
  EXPECT_EQ(id, AlgoId::Tree);
  EXPECT_FALSE(f.get(CollKind::Reduce, &id));
  EXPECT_FALSE(f.get(CollKind::AlltoAll, &id));
}

TEST(AlgoSpec, SpacesCaseAndAliases) {
  EXPECT_EQ(Parse(" AllReduce : RHD ; reduce_scatter:rd ").toString(), "allreduce:rhd;reducescatter:rd");
  EXPECT_EQ(Parse("alltoall:pairwise").toString(), "alltoall:pairwise");
  EXPECT_EQ(Parse("allreduce:hier_leader").toString(), "allreduce:hier_leader");
}

TEST(AlgoSpec, BareNameAppliesWhereItServes) {
  EXPECT_EQ(Parse("tree").toString(), "allreduce:tree;broadcast:tree;reduce:tree");
  EXPECT_EQ(Parse("ring").toString(), "allreduce:ring;allgather:ring;reducescatter:ring");
  EXPECT_EQ(Parse("hier").toString(), "allreduce:hier;broadcast:hier;reduce:hier;allgather:hier;reducescatter:hier");
  // An entry for a collective overrides the bare name, in either order.
  EXPECT_EQ(Parse("rd;allreduce:ring").toString(), "allreduce:ring;allgather:rd;reducescatter:rd");
  EXPECT_EQ(Parse("allreduce:ring;rd").toString(), "allreduce:ring;allgather:rd;reducescatter:rd");
}

TEST(AlgoSpec, Errors) {
  EXPECT_NE(Error("ringg").find("unknown algorithm 'ringg' (known: ring, chain"), std::string::npos);
  EXPECT_NE(Error("allreduce:tree;allgather:tree").find("'tree' does not serve allgather (it serves allreduce, "
                                                        "broadcast, reduce)"),
            std::string::npos);
  EXPECT_NE(Error("allreduce:ring;allreduce:tree").find("allreduce is named twice"), std::string::npos);
  EXPECT_NE(Error("ring;tree").find("two bare algorithm names"), std::string::npos);
  EXPECT_NE(Error("allreduce:ring;").find("entry 2"), std::string::npos);
  EXPECT_NE(Error(";").find("entry 1"), std::string::npos);
  EXPECT_NE(Error("allreduce:").find("name is missing"), std::string::npos);
  EXPECT_NE(Error(":ring").find("unknown collective ''"), std::string::npos);
  EXPECT_NE(Error("allreduce:ring:tree").find("more than one ':'"), std::string::npos);
  EXPECT_NE(Error("gather:ring").find("unknown collective 'gather'"), std::string::npos);
  EXPECT_NE(Error("oneshot;allreduce:twoshot;ring").find("two bare algorithm names"), std::string::npos);
  EXPECT_NE(Error("broadcast:oneshot").find("does not serve broadcast"), std::string::npos);
  EXPECT_NE(Error("alltoall:ring").find("does not serve alltoall"), std::string::npos);
  EXPECT_NE(Error(std::string("ri\x01ng", 5)).find("'ri\\x01ng'"), std::string::npos);
  EXPECT_NE(Error(std::string(500, 'x')).find("..."), std::string::npos);
}

// Whatever the bytes, the parser answers (ok or an error) and never forces an algorithm on a
// collective it does not serve.
TEST(AlgoSpec, ArbitraryBytesNeverBreakIt) {
  const std::string alphabet = "ringtreedhal_:; \t\x00\xff,=ALLREDUCEbcst";
  uint32_t seed = 1;
  for (int trial = 0; trial < 20000; ++trial) {
    std::string s;
    const int len = static_cast<int>(seed % 40);
    for (int i = 0; i < len; ++i) {
      seed = seed * 1103515245u + 12345u;
      s += alphabet[(seed >> 16) % alphabet.size()];
    }
    seed = seed * 1103515245u + 12345u;
    ForcedAlgos f;
    if (!ParseAlgoSpec(s, &f).ok()) continue;
    for (int k = 0; k < kNumCollKinds; ++k) {
      AlgoId id;
      if (!f.get(static_cast<CollKind>(k), &id)) continue;
      EXPECT_TRUE(AlgoServes(id, static_cast<CollKind>(k))) << s;
      EXPECT_TRUE(GetAlgoInfo(id).implemented) << s;
    }
  }
}

}  // namespace
}  // namespace strata
