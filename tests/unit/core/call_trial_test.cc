// CallTrial and InPlaceTrial against simulated calls: the order their plans take turns in, the calls that count, the
// medians each rank reports (against a sort of the counted times), the plan that runs once the ranks' figures are in,
// and the trial started over.
#include "core/call_trial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "core/in_place_trial.h"

namespace strata {
namespace {

// Runs the trial's calls (a CallTrial's or an InPlaceTrial's), the i-th taking us(plan, i); returns the plans they
// ran.
template <typename Trial, typename Us>
auto Drive(Trial& t, const Us& us) {
  std::vector<decltype(t.next())> ran;
  for (int i = 0; !t.due() && i < 1000; ++i) {
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

// Turns of two calls each, in the order ABBA BAAB.
TEST(CallTrial, TwoPlansRunAbbaBaab) {
  CallTrial t(2);
  EXPECT_EQ(Drive(t, [](int, int) { return 1.0; }), (std::vector<int>{0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}));
  EXPECT_TRUE(t.due());
  EXPECT_EQ(CallTrial::Calls(2), 16);
}

// The turns of a trial (its calls two by two, both of one plan): every plan has kCallsPerPlan of them, one a round,
// and (from 3 plans) takes the first and the last place of a round at least once each: no plan always runs right
// after another's warm-up of the same buffers, or always first.
TEST(CallTrial, EveryPlanTakesEveryTurnOfARound) {
  for (int n = 2; n <= CallTrial::kMaxPlans; ++n) {
    CallTrial t(n);
    ASSERT_EQ(t.plans(), n);
    const std::vector<int> ran = Drive(t, [](int, int) { return 1.0; });
    ASSERT_EQ(ran.size(), static_cast<size_t>(2 * n * CallTrial::kCallsPerPlan)) << n << " plans";
    ASSERT_EQ(ran.size(), static_cast<size_t>(CallTrial::Calls(n))) << n << " plans";
    std::vector<int> turns;
    for (size_t i = 0; i < ran.size(); i += 2) {
      EXPECT_EQ(ran[i], ran[i + 1]) << n << " plans: calls " << i << " and " << i + 1 << " are not one turn";
      turns.push_back(ran[i]);
    }
    for (int round = 0; round < CallTrial::kCallsPerPlan; ++round) {
      std::vector<int> r(turns.begin() + round * n, turns.begin() + (round + 1) * n);
      std::sort(r.begin(), r.end());
      for (int p = 0; p < n; ++p) EXPECT_EQ(r[p], p) << n << " plans, round " << round;
    }
    for (int p = 0; p < n; ++p) {
      int first = 0, last = 0;
      for (int round = 0; round < CallTrial::kCallsPerPlan; ++round) {
        first += turns[round * n] == p;
        last += turns[round * n + n - 1] == p;
      }
      if (n <= CallTrial::kCallsPerPlan) {
        EXPECT_GE(first + last, 1) << n << " plans: plan " << p << " never opens or closes a round";
      }
      if (n == 2) {
        EXPECT_EQ(first, 2) << "plan " << p;  // first in half the pairs
      }
    }
  }
}

TEST(CallTrial, PlansOutsideTheRangeAreClamped) {
  EXPECT_EQ(CallTrial(0).plans(), 2);
  EXPECT_EQ(CallTrial(1).plans(), 2);
  EXPECT_EQ(CallTrial(CallTrial::kMaxPlans + 5).plans(), CallTrial::kMaxPlans);
}

// Each plan's median over the second calls of its turns; the first ones, however slow, do not count.
TEST(CallTrial, MediansOfEachPlansCalls) {
  CallTrial t(3);
  std::vector<double> times[3];
  // Distinct times, one outlier per plan among the counted calls (a page fault, a stall): the median must not move
  // with it; every first call of a turn far slower still.
  Drive(t, [&times](int p, int i) {
    if (i % 2 == 0) return 1e7 + i;
    const double us = 1000.0 * (p + 1) + 7.0 * i + (i % 10 == 5 ? 90000.0 : 0.0);
    times[p].push_back(us);
    return us;
  });
  const std::vector<double> mine = t.mine();
  ASSERT_EQ(mine.size(), 3u);
  for (int p = 0; p < 3; ++p) {
    ASSERT_EQ(times[p].size(), static_cast<size_t>(CallTrial::kCallsPerPlan));
    EXPECT_DOUBLE_EQ(mine[p], Median(times[p])) << "plan " << p;
    EXPECT_LT(mine[p], 1000.0 * (p + 2)) << "plan " << p << ": an outlier moved the median";
  }
}

TEST(CallTrial, TheLeastSumRunsFromThenOn) {
  for (int want = 0; want < 4; ++want) {
    CallTrial t(4);
    Drive(t, [](int, int) { return 1.0; });
    std::vector<double> summed = {400, 400, 400, 400};
    summed[want] = 300;
    t.settle(summed);
    EXPECT_TRUE(t.decided());
    EXPECT_FALSE(t.due());
    EXPECT_EQ(t.winner(), want);
    for (int i = 0; i < 20; ++i) {
      t.begin();
      EXPECT_EQ(t.next(), want) << "call " << i << " after the trial";
      t.record(1e9);  // later times change nothing
    }
  }
}

TEST(CallTrial, ATieGoesToTheLowerIndex) {
  CallTrial t(3);
  Drive(t, [](int, int) { return 5.0; });
  t.settle({700, 500, 500});
  EXPECT_EQ(t.winner(), 1);
}

// A plan slower on the first call of each turn (after the other plan's) but faster on the second wins.
TEST(CallTrial, TheFirstCallOfATurnDoesNotCount) {
  CallTrial t(2);
  Drive(t, [](int p, int i) { return i % 2 == 0 ? (p == 1 ? 5000.0 : 1000.0) : (p == 1 ? 800.0 : 900.0); });
  ASSERT_TRUE(t.due());
  EXPECT_EQ(t.mine(), (std::vector<double>{900.0, 800.0}));
  t.settle(t.mine());
  EXPECT_EQ(t.winner(), 1);
}

TEST(CallTrial, RecordsPastTheTrialAreIgnoredUntilSettled) {
  CallTrial t(2);
  Drive(t, [](int p, int) { return p == 0 ? 10.0 : 20.0; });
  const std::vector<double> before = t.mine();
  t.record(1e6);
  t.record(1e6);
  EXPECT_TRUE(t.due());
  EXPECT_EQ(t.mine(), before);
}

// A decided trial keeps its plan for kRetrialCalls calls, then runs the trial again in the same order, and the new
// sums decide afresh.
TEST(CallTrial, ATrialStartsOverAfterItsCalls) {
  CallTrial t(3);
  const std::vector<int> first = Drive(t, [](int, int) { return 1.0; });
  t.settle({3000, 1000, 2000});
  for (int i = 0; i < CallTrial::kRetrialCalls; ++i) {
    t.begin();
    ASSERT_TRUE(t.decided()) << "call " << i << " after the decision";
    ASSERT_EQ(t.next(), 1) << "call " << i << " after the decision";
  }
  const std::vector<int> again = Drive(t, [](int p, int) { return 10.0 * (p + 1); });
  EXPECT_EQ(again, first);
  ASSERT_TRUE(t.due());
  EXPECT_EQ(t.mine(), (std::vector<double>{10.0, 20.0, 30.0}));  // the new calls' times, not the first trial's
  t.settle({1000, 3000, 2000});
  t.begin();
  EXPECT_EQ(t.next(), 0);
}

// InPlaceTrial, the two-plan trial of the in-place plan (first) against the selector's: the same turns by its own
// names, and its tie.
constexpr int kInPlaceTrialCalls = 4 * InPlaceTrial::kCallsPerPlan;

// Turns of two calls (the in-place plan first): ABBA BAAB by turns, each plan first in half the pairs of turns.
TEST(InPlaceTrial, EachPlanRunsAsOftenFirstAsSecond) {
  InPlaceTrial t;
  const std::vector<InPlaceTrial::Plan> ran = Drive(t, [](InPlaceTrial::Plan, int) { return 1.0; });
  ASSERT_EQ(ran.size(), static_cast<size_t>(kInPlaceTrialCalls));
  EXPECT_TRUE(t.due());
  EXPECT_FALSE(t.decided());
  const InPlaceTrial::Plan I = InPlaceTrial::kInPlace, S = InPlaceTrial::kSelectors;
  EXPECT_EQ(ran, (std::vector<InPlaceTrial::Plan>{I, I, S, S, S, S, I, I, S, S, I, I, I, I, S, S}));
  int inPlace = 0, firstOfPair = 0;
  for (size_t i = 0; i < ran.size(); ++i) {
    inPlace += ran[i] == I;
    if (i % 4 == 0) firstOfPair += ran[i] == I;
  }
  EXPECT_EQ(inPlace, 2 * InPlaceTrial::kCallsPerPlan);
  EXPECT_EQ(firstOfPair, InPlaceTrial::kCallsPerPlan / 2);  // first in half the pairs of turns, second in the others
}

TEST(InPlaceTrial, MediansOfEachPlansCalls) {
  InPlaceTrial t;
  std::vector<double> times[2];
  // Distinct times, one outlier per plan (a collapse, a page fault): the median must not move with it.
  const std::vector<InPlaceTrial::Plan> ran = Drive(t, [&times](InPlaceTrial::Plan p, int i) {
    if (i % 2 == 0) return 1e7;  // the first call of a turn, not counted
    const double us = (p == InPlaceTrial::kInPlace ? 900.0 : 1200.0) + 5.0 * i + (i == 7 ? 50000.0 : 0.0);
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
