// The communicator's topology built from the ranks' places: which hosts run more ranks than their bindings have CPUs.
#include "topology/comm_topology.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace strata {
namespace {

RankPlace Place(const std::string& host, std::vector<int> cpus) {
  RankPlace p;
  p.hostId = host;
  p.cpus = std::move(cpus);
  return p;
}

bool Oversubscribed(std::vector<RankPlace> ranks) {
  return CommTopology(std::move(ranks), LinkTable::Defaults()).oversubscribed();
}

TEST(CommTopology, AHostWithMoreRanksThanTheCpusOfTheirBindingsIsOversubscribed) {
  // Two ranks pinned to a core each, or both free on both: a core per rank.
  EXPECT_FALSE(Oversubscribed({Place("a", {0}), Place("a", {1})}));
  EXPECT_FALSE(Oversubscribed({Place("a", {0, 1}), Place("a", {0, 1})}));
  // Four ranks on two cores, pinned in blocks or all free: oversubscribed.
  EXPECT_TRUE(Oversubscribed({Place("a", {0}), Place("a", {0}), Place("a", {1}), Place("a", {1})}));
  EXPECT_TRUE(Oversubscribed({Place("a", {0, 1}), Place("a", {0, 1}), Place("a", {0, 1}), Place("a", {0, 1})}));
  // Four ranks free on 16 CPUs.
  std::vector<int> sixteen;
  for (int c = 0; c < 16; ++c) sixteen.push_back(c);
  EXPECT_FALSE(Oversubscribed(std::vector<RankPlace>(4, Place("a", sixteen))));
  // Per host: the second host's two ranks share one core.
  EXPECT_TRUE(Oversubscribed({Place("a", {0}), Place("a", {1}), Place("b", {0}), Place("b", {0})}));
  EXPECT_FALSE(Oversubscribed({Place("a", {0}), Place("a", {1}), Place("b", {0}), Place("b", {1})}));
  // A binding nobody reported counts no CPU.
  EXPECT_TRUE(Oversubscribed({Place("a", {}), Place("a", {0})}));
  EXPECT_FALSE(Oversubscribed({Place("a", {0})}));
}

int RanksPerCpu(std::vector<RankPlace> ranks) {
  return CommTopology(std::move(ranks), LinkTable::Defaults()).ranksPerCpu();
}

TEST(CommTopology, RanksPerCpuIsTheMostCrowdedHostsRoundedUp) {
  auto free = [](int nranks, std::vector<int> cpus) { return std::vector<RankPlace>(nranks, Place("a", cpus)); };
  EXPECT_EQ(RanksPerCpu(free(2, {0, 1})), 1);
  EXPECT_EQ(RanksPerCpu(free(1, {0, 1})), 1);
  EXPECT_EQ(RanksPerCpu(free(3, {0, 1})), 2);
  EXPECT_EQ(RanksPerCpu(free(4, {0, 1})), 2);
  EXPECT_EQ(RanksPerCpu(free(5, {0, 1})), 3);
  EXPECT_EQ(RanksPerCpu(free(8, {0, 1})), 4);
  EXPECT_EQ(RanksPerCpu(free(4, {0})), 4);
  // Pinned in blocks: the CPUs of the host's bindings taken together.
  EXPECT_EQ(RanksPerCpu({Place("a", {0}), Place("a", {0}), Place("a", {1}), Place("a", {1})}), 2);
  // The most crowded host decides: two ranks on a core of host b.
  EXPECT_EQ(RanksPerCpu({Place("a", {0}), Place("a", {1}), Place("b", {0}), Place("b", {0})}), 2);
  // Bindings nobody reported: every rank of the host on one CPU.
  EXPECT_EQ(RanksPerCpu({Place("a", {}), Place("a", {})}), 2);
}

}  // namespace
}  // namespace strata
