// CallTrial and InPlaceTrial against simulated calls: the order their plans take turns in, the calls that count, the
// medians each rank reports (against a sort of the counted times), the plan that runs once the ranks' figures are in,
// and the trial started over.
#include "core/call_trial.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
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

// The two shapes of turns the communicator uses: the in-place trial's pairs and the class trial's runs of four.
const CallTrial::Shape kShapes[] = {CallTrial::kPairTurns, CallTrial::kRunTurns};

std::string NameOf(CallTrial::Shape s) {
  return std::to_string(s.turnsPerPlan) + " turns of " + std::to_string(s.callsPerTurn) + " calls";
}

// Two plans: turns of two calls in the order ABBA BAAB; two turns of four calls, ABBA by turns, as many calls, six of
// each plan counted.
TEST(CallTrial, TwoPlansTakeTurnsAbba) {
  const struct {
    CallTrial::Shape shape;
    std::vector<int> ran;
    int counted;
  } cases[] = {
      {CallTrial::kPairTurns, {0, 0, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1}, 4},
      {CallTrial::kRunTurns, {0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0}, 6},
  };
  for (const auto& c : cases) {
    CallTrial t(2, c.shape);
    EXPECT_EQ(Drive(t, [](int, int) { return 1.0; }), c.ran) << NameOf(c.shape);
    EXPECT_TRUE(t.due()) << NameOf(c.shape);
    EXPECT_EQ(CallTrial::Calls(2, c.shape), 16) << NameOf(c.shape);
    EXPECT_EQ(t.counted(), c.counted) << NameOf(c.shape);
  }
}

// The turns of a trial (runs of callsPerTurn calls of one plan): every plan has turnsPerPlan of them, one a round,
// and, where the rounds are as many as the plans or more, takes the first or the last place of a round at least once:
// no plan always runs right after another's warm-up of the same buffers, or always first.
TEST(CallTrial, EveryPlanTakesEveryTurnOfARound) {
  for (const CallTrial::Shape shape : kShapes) {
    const int k = shape.callsPerTurn, rounds = shape.turnsPerPlan;
    for (int n = 2; n <= CallTrial::kMaxPlans; ++n) {
      CallTrial t(n, shape);
      ASSERT_EQ(t.plans(), n);
      const std::string what = NameOf(shape) + ", " + std::to_string(n) + " plans";
      const std::vector<int> ran = Drive(t, [](int, int) { return 1.0; });
      ASSERT_EQ(ran.size(), static_cast<size_t>(k * n * rounds)) << what;
      ASSERT_EQ(ran.size(), static_cast<size_t>(CallTrial::Calls(n, shape))) << what;
      std::vector<int> turns;
      for (size_t i = 0; i < ran.size(); i += k) {
        for (int j = 1; j < k; ++j) EXPECT_EQ(ran[i + j], ran[i]) << what << ": call " << i + j << " leaves its turn";
        turns.push_back(ran[i]);
      }
      for (int round = 0; round < rounds; ++round) {
        std::vector<int> r(turns.begin() + round * n, turns.begin() + (round + 1) * n);
        std::sort(r.begin(), r.end());
        for (int p = 0; p < n; ++p) EXPECT_EQ(r[p], p) << what << ", round " << round;
      }
      for (int p = 0; p < n; ++p) {
        int first = 0, last = 0;
        for (int round = 0; round < rounds; ++round) {
          first += turns[round * n] == p;
          last += turns[round * n + n - 1] == p;
        }
        if (n <= rounds) {
          EXPECT_GE(first + last, 1) << what << ": plan " << p << " never opens or closes a round";
        }
        if (n == 2) {
          EXPECT_EQ(first, rounds / 2) << what << ": plan " << p;  // first in half the rounds
        }
      }
    }
  }
}

TEST(CallTrial, PlansOutsideTheRangeAreClamped) {
  EXPECT_EQ(CallTrial(0).plans(), 2);
  EXPECT_EQ(CallTrial(1).plans(), 2);
  EXPECT_EQ(CallTrial(CallTrial::kMaxPlans + 5).plans(), CallTrial::kMaxPlans);
}

// A turn has two calls at least (one to count) and a trial counts 1 to kMaxCounted (16) calls a plan: too many turns
// are cut to what fits, too long a turn to 17 calls.
TEST(CallTrial, ShapesOutsideTheRangeAreClamped) {
  const CallTrial small(2, {0, 1});
  EXPECT_EQ(small.shape().turnsPerPlan, 1);
  EXPECT_EQ(small.shape().callsPerTurn, 2);
  EXPECT_EQ(small.counted(), 1);
  CallTrial large(2, {10, 4});  // 5 turns of 4 calls: 15 counted
  EXPECT_EQ(large.shape().turnsPerPlan, 5);
  EXPECT_EQ(large.shape().callsPerTurn, 4);
  EXPECT_EQ(large.counted(), 15);
  EXPECT_EQ(Drive(large, [](int, int) { return 1.0; }).size(), 40u);  // 2 plans x 5 turns x 4 calls
  const CallTrial longTurn(2, {1, 40});
  EXPECT_EQ(longTurn.shape().callsPerTurn, 17);
  EXPECT_EQ(longTurn.counted(), 16);
}

// Each plan's median over the counted calls of its turns (all but the first of each); the first ones, however slow,
// do not count.
TEST(CallTrial, MediansOfEachPlansCalls) {
  for (const CallTrial::Shape shape : kShapes) {
    CallTrial t(3, shape);
    std::vector<double> times[3];
    // Distinct times, one outlier per plan among the counted calls (a page fault, a stall): the median must not move
    // with it; every first call of a turn far slower still.
    Drive(t, [&times, shape](int p, int i) {
      if (i % shape.callsPerTurn == 0) return 1e7 + i;
      const double us = 1000.0 * (p + 1) + 7.0 * i + (i % 10 == 5 ? 90000.0 : 0.0);
      times[p].push_back(us);
      return us;
    });
    const std::vector<double> mine = t.mine();
    ASSERT_EQ(mine.size(), 3u);
    for (int p = 0; p < 3; ++p) {
      ASSERT_EQ(times[p].size(), static_cast<size_t>(shape.counted())) << NameOf(shape);
      EXPECT_DOUBLE_EQ(mine[p], Median(times[p])) << NameOf(shape) << ", plan " << p;
      EXPECT_LT(mine[p], 1000.0 * (p + 2)) << NameOf(shape) << ", plan " << p << ": an outlier moved the median";
    }
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

// A plan slower on the first call of each turn (after the other plan's) but faster on the others wins.
TEST(CallTrial, TheFirstCallOfATurnDoesNotCount) {
  for (const CallTrial::Shape shape : kShapes) {
    CallTrial t(2, shape);
    Drive(t, [shape](int p, int i) {
      return i % shape.callsPerTurn == 0 ? (p == 1 ? 5000.0 : 1000.0) : (p == 1 ? 800.0 : 900.0);
    });
    ASSERT_TRUE(t.due()) << NameOf(shape);
    EXPECT_EQ(t.mine(), (std::vector<double>{900.0, 800.0})) << NameOf(shape);
    t.settle(t.mine());
    EXPECT_EQ(t.winner(), 1) << NameOf(shape);
  }
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
