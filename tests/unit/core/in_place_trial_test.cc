// InPlaceTrial against simulated calls: the order the two plans run in, the medians each rank reports (against a
// sort of the recorded times), and the plan that runs once the ranks' figures are in.
#include "core/in_place_trial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <vector>

namespace strata {
namespace {

constexpr int kTrialCalls = 2 * InPlaceTrial::kCallsPerPlan;

// Runs the trial's calls, the i-th taking us(plan, i); returns the plans they ran.
std::vector<InPlaceTrial::Plan> Drive(InPlaceTrial& t, const std::function<double(InPlaceTrial::Plan, int)>& us) {
  std::vector<InPlaceTrial::Plan> ran;
  for (int i = 0; !t.due() && i < 100; ++i) {
    t.begin();
    ran.push_back(t.next());
    t.record(us(ran.back(), i));
  }
  return ran;
}

// The median of v (the mean of the middle two of an even count), computed apart from the trial.
double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

TEST(InPlaceTrial, EachPlanRunsAsOftenFirstAsSecond) {
  InPlaceTrial t;
  const std::vector<InPlaceTrial::Plan> ran = Drive(t, [](InPlaceTrial::Plan, int) { return 1.0; });
  ASSERT_EQ(ran.size(), static_cast<size_t>(kTrialCalls));
  EXPECT_TRUE(t.due());
  EXPECT_FALSE(t.decided());
  int inPlace = 0, firstOfPair = 0, afterItself = 0, afterOther = 0;
  for (size_t i = 0; i < ran.size(); ++i) {
    inPlace += ran[i] == InPlaceTrial::kInPlace;
    if (i % 2 == 0) firstOfPair += ran[i] == InPlaceTrial::kInPlace;
    if (i > 0 && ran[i] == InPlaceTrial::kInPlace) (ran[i - 1] == ran[i] ? afterItself : afterOther) += 1;
  }
  EXPECT_EQ(inPlace, InPlaceTrial::kCallsPerPlan);
  EXPECT_EQ(firstOfPair, InPlaceTrial::kCallsPerPlan / 2);  // first in half the pairs, second in the others
  EXPECT_GT(afterItself, 0);
  EXPECT_GT(afterOther, 0);
}

TEST(InPlaceTrial, MediansOfEachPlansCalls) {
  InPlaceTrial t;
  std::vector<double> times[2];
  // Distinct times, one outlier per plan (a collapse, a page fault): the median must not move with it.
  const std::vector<InPlaceTrial::Plan> ran = Drive(t, [&times](InPlaceTrial::Plan p, int i) {
    const double us = (p == InPlaceTrial::kInPlace ? 900.0 : 1200.0) + 10.0 * i + (i == 3 ? 50000.0 : 0.0);
    times[p].push_back(us);
    return us;
  });
  ASSERT_EQ(times[0].size(), static_cast<size_t>(InPlaceTrial::kCallsPerPlan));
  ASSERT_EQ(times[1].size(), static_cast<size_t>(InPlaceTrial::kCallsPerPlan));
  const std::array<double, 2> mine = t.mine();
  EXPECT_DOUBLE_EQ(mine[InPlaceTrial::kSelectors], Median(times[InPlaceTrial::kSelectors]));
  EXPECT_DOUBLE_EQ(mine[InPlaceTrial::kInPlace], Median(times[InPlaceTrial::kInPlace]));
  EXPECT_LT(mine[InPlaceTrial::kInPlace], 1000.0);
}

TEST(InPlaceTrial, TheFasterSumOverRanksRunsFromThenOn) {
  for (const bool inPlaceFaster : {true, false}) {
    InPlaceTrial t;
    Drive(t, [](InPlaceTrial::Plan, int) { return 1.0; });
    // This rank found them level; the ranks' sums decide.
    t.settle(inPlaceFaster ? std::array<double, 2>{2000.0, 1500.0} : std::array<double, 2>{1500.0, 2000.0});
    EXPECT_TRUE(t.decided());
    EXPECT_FALSE(t.due());
    const InPlaceTrial::Plan want = inPlaceFaster ? InPlaceTrial::kInPlace : InPlaceTrial::kSelectors;
    for (int i = 0; i < 20; ++i) {
      t.begin();
      EXPECT_EQ(t.next(), want) << "call " << i << " after the trial";
      t.record(inPlaceFaster ? 1e9 : 1.0);  // later times change nothing
    }
  }
}

TEST(InPlaceTrial, ALevelTrialKeepsTheInPlacePlan) {
  InPlaceTrial t;
  Drive(t, [](InPlaceTrial::Plan, int) { return 5.0; });
  t.settle({1000.0, 1000.0});
  EXPECT_EQ(t.next(), InPlaceTrial::kInPlace);
}

TEST(InPlaceTrial, RecordsPastTheTrialAreIgnoredUntilSettled) {
  InPlaceTrial t;
  Drive(t, [](InPlaceTrial::Plan p, int) { return p == InPlaceTrial::kInPlace ? 10.0 : 20.0; });
  const std::array<double, 2> before = t.mine();
  t.record(1e6);
  t.record(1e6);
  EXPECT_TRUE(t.due());
  EXPECT_EQ(t.mine(), before);
}

// A decided trial keeps its plan for kRetrialCalls calls, then runs the trial again in the same order, and the new
// sums decide afresh.
TEST(InPlaceTrial, ATrialStartsOverAfterItsCalls) {
  InPlaceTrial t;
  const std::vector<InPlaceTrial::Plan> first = Drive(t, [](InPlaceTrial::Plan, int) { return 1.0; });
  t.settle({1000.0, 3000.0});  // the selector's plan faster
  for (int i = 0; i < InPlaceTrial::kRetrialCalls; ++i) {
    t.begin();
    ASSERT_TRUE(t.decided()) << "call " << i << " after the decision";
    ASSERT_EQ(t.next(), InPlaceTrial::kSelectors) << "call " << i << " after the decision";
  }
  const std::vector<InPlaceTrial::Plan> again =
      Drive(t, [](InPlaceTrial::Plan p, int) { return p == InPlaceTrial::kInPlace ? 10.0 : 30.0; });
  EXPECT_EQ(again, first);
  ASSERT_TRUE(t.due());
  EXPECT_DOUBLE_EQ(t.mine()[InPlaceTrial::kInPlace], 10.0);  // the new calls' times, not the first trial's
  EXPECT_DOUBLE_EQ(t.mine()[InPlaceTrial::kSelectors], 30.0);
  t.settle({3000.0, 1000.0});
  t.begin();
  EXPECT_EQ(t.next(), InPlaceTrial::kInPlace);
}

}  // namespace
}  // namespace strata
