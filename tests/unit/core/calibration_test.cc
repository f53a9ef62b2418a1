// The calibration's arithmetic on made-up timings: a fake runner takes a set time per plan (busy waiting), so
// what the cost model receives can be checked against the formulas worked out by hand.
#include "core/calibration.h"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "algorithms/algorithm_table.h"
#include "unit/with_retries.h"

namespace strata {
namespace {

void BusyUs(double us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::nanoseconds(static_cast<int64_t>(us * 1000));
  while (std::chrono::steady_clock::now() < end) {
  }
}

// The fake runners' times are real busy waits, and a preempted VM stretches them: a test that checks measured times
// runs WithRetries (unit/with_retries.h). A wrong formula fails every attempt alike.

// Rank 0 of as many ranks as `hostOf` names, rank r on host hostOf[r].
PlanGeometry RankZeroOf(const std::vector<int>& hostOf) {
  PlanGeometry geo;
  geo.nranks = static_cast<int>(hostOf.size());
  geo.rank = 0;
  geo.hostOf = hostOf;
  return geo;
}

// The elements a plan's steps reach: its vector's length.
uint64_t PlanElems(const Plan& plan) {
  uint64_t elems = 0;
  for (const PlanQueue& q : plan.queues)
    for (const Step& s : q.steps) elems = std::max(elems, s.src.offset + s.count);
  return elems;
}

// The figures each rank sends in one of the calibration's allgathers: the ring allgather's local copy of its own.
uint64_t FigureCount(const Plan& plan) { return plan.queues[0].steps[0].count; }

// The calibration's allgather of its figures (the only float64 plan it runs), answered as if each of the
// `nranks` ranks had measured the same; false for any other plan.
bool AnswerFigures(const Plan& plan, const void* send, void* recv, int nranks) {
  if (plan.dtype != strataFloat64) return false;
  const uint64_t figures = FigureCount(plan);
  for (int r = 0; r < nranks; ++r)
    std::memcpy(static_cast<double*>(recv) + figures * r, send, figures * sizeof(double));
  return true;
}

// 2 hosts x 2 ranks; a small ring allreduce takes 60 us, 1 MiB 2000 us.
PlanRunner FakeRunner() {
  return [](const Plan& plan, const void* send, void* recv) {
    if (AnswerFigures(plan, send, recv, 4)) return Status::Ok();
    const bool small = PlanElems(plan) <= 64;
    if (plan.algorithm == "ring")
      BusyUs(small ? 60 : 2000);
    else if (plan.algorithm == "rhd")
      BusyUs(2500);
    else if (plan.algorithm == "direct")
      BusyUs(50);
    else if (plan.algorithm == "rd")
      BusyUs(40);
    else if (plan.algorithm == "hier")
      BusyUs(55);
    return Status::Ok();
  };
}

// Two candidates of one allreduce (16384 floats, 4 ranks of one host, seen from rank 0): rd, then the ring.
struct RdAndRing {
  PlanGeometry geo;
  CollDesc desc;
  std::vector<Plan> plans;
  RdAndRing() {
    geo.nranks = 4;
    geo.rank = 0;
    geo.hostOf = {0, 0, 0, 0};
    desc.kind = CollKind::AllReduce;
    desc.count = 16384;
    desc.dtype = strataFloat32;
    desc.op = strataSum;
    plans = {BuildPlanWith(AlgoId::Rd, desc, geo), BuildPlanWith(AlgoId::Ring, desc, geo)};
  }
};

// RdAndRing's two plans timed by `run` in `rounds` rounds of the full pattern (or, without `settle`, the light one):
// each one's time per run, as every rank would hold it.
std::vector<double> TimeRdAndRing(const RdAndRing& c, const PlanRunner& run, int rounds, bool settle, bool inPlaceToo) {
  std::vector<float> send(c.desc.count, 1.0f), recv(c.desc.count);
  TimingPattern how;
  how.rounds = rounds;
  how.settle = settle;
  how.inPlaceToo = inPlaceToo;
  std::vector<double> us;
  EXPECT_TRUE(TimePlansAlike(c.geo, run, c.plans, send.data(), recv.data(), how, &us).ok());
  EXPECT_EQ(us.size(), 2u);
  us.resize(2, 0.0);
  return us;
}

// Candidates timed alike: each plan's time per run, the median over the rounds, then over the ranks. The fake
// allgather answers as if the other three ranks had measured 2, 3 and 4 times this rank's figures, so the median
// over the four (the lower middle one) is twice them.
TEST(Calibration, PlansTimedAlikeGiveTheMedianOverTheRanks) {
  WithRetries([&] {
    const RdAndRing c;
    for (bool inPlaceToo : {true, false}) {
      int inPlace = 0, outOfPlace = 0;
      PlanRunner run = [&](const Plan& plan, const void* in, void* out) {
        if (plan.dtype == strataFloat64) {  // the figures' allgather
          const uint64_t figures = FigureCount(plan);
          for (int r = 0; r < 4; ++r)
            for (uint64_t f = 0; f < figures; ++f)
              static_cast<double*>(out)[figures * r + f] = static_cast<const double*>(in)[f] * (r + 1);
          return Status::Ok();
        }
        ++(in == out ? inPlace : outOfPlace);
        BusyUs(plan.algorithm == "rd" ? 100 : 300);
        return Status::Ok();
      };
      const std::vector<double> us = TimeRdAndRing(c, run, 5, true, inPlaceToo);
      // Per run (an out-of-place and an in-place run count as two), twice this rank's own figure.
      EXPECT_GE(us[0], 200.0);
      EXPECT_LT(us[0], 300.0);
      EXPECT_GE(us[1], 600.0);
      EXPECT_LT(us[1], 900.0);
      EXPECT_GT(outOfPlace, 0);
      EXPECT_EQ(inPlace, inPlaceToo ? outOfPlace : 0);
    }
  });
}

// Of two rounds the lower one counts: a round in which the machine stalled does not decide.
TEST(Calibration, OfTwoRoundsAStalledOneDoesNotDecide) {
  WithRetries([&] {
    const RdAndRing c;
    for (int stalled : {1, 2}) {
      int ringCalls = 0;
      PlanRunner run = [&](const Plan& plan, const void* in, void* out) {
        if (AnswerFigures(plan, in, out, 4)) return Status::Ok();
        if (plan.algorithm == "rd") {
          BusyUs(1500);
          return Status::Ok();
        }
        // The ring's calls: 1 to line up, then per round a settling call and a block of two (calls 3-4, 6-7).
        ++ringCalls;
        const bool inStalledBlock = ringCalls == 3 * stalled || ringCalls == 3 * stalled + 1;
        BusyUs(inStalledBlock ? 3000 : 300);
        return Status::Ok();
      };
      const std::vector<double> us = TimeRdAndRing(c, run, 2, true, false);
      EXPECT_GE(us[1], 300.0) << "stalled round " << stalled;
      EXPECT_LT(us[1], 1500.0) << "stalled round " << stalled << ": the ring timed slower than rd";
      EXPECT_GE(us[0], 1500.0);
    }
  });
}

// The timing's rounds within a budget: each plan takes 1 call to line up and 3 per round (a settling call and a block
// of two), a call two runs when in place too; at most 5 rounds, none when 2 do not fit.
TEST(Calibration, TimedRoundsFitTheBudget) {
  EXPECT_EQ(TimedRoundsWithin(20000, 100, true), 5);    // (20000 / 200 - 1) / 3 = 33
  EXPECT_EQ(TimedRoundsWithin(20000, 1000, true), 3);   // (10 - 1) / 3
  EXPECT_EQ(TimedRoundsWithin(20000, 1000, false), 5);  // (20 - 1) / 3 = 6.3
  EXPECT_EQ(TimedRoundsWithin(20000, 1200, true), 2);   // (8.33 - 1) / 3 = 2.4
  EXPECT_EQ(TimedRoundsWithin(20000, 1500, true), 0);   // (6.67 - 1) / 3 = 1.9
  EXPECT_EQ(TimedRoundsWithin(20000, 2000, true), 0);   // (5 - 1) / 3 = 1.3
  EXPECT_EQ(TimedRoundsWithin(20000, 2000, false), 3);
  EXPECT_EQ(TimedRoundsWithin(20000, 0, true), 5);
}

// Too many plans for the budget: the droppable ones leave, the last first, until two rounds fit the rest.
TEST(Calibration, TimedPlansDropTheLastDroppableUntilTwoRoundsFit) {
  std::vector<size_t> keep;
  // 5 plans of 360 us in place: 3600 us a call, (5.6 - 1) / 3 = 1.5 rounds. Without plans 2 and 1 (the droppable,
  // last first): 3 plans, 2160 us, (9.3 - 1) / 3 = 2.8.
  EXPECT_EQ(TimedPlansWithin(20000, {360, 360, 360, 360, 360}, {false, true, true, false, false}, true, &keep), 2);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 3, 4}));
  // Dropping plan 2 alone is enough: 4 plans of 300 us, (8.3 - 1) / 3 = 2.4.
  EXPECT_EQ(TimedPlansWithin(20000, {300, 300, 300, 300, 300}, {false, true, true, false, false}, true, &keep), 2);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 1, 3, 4}));
  // All fit: nothing leaves, and the rounds are TimedRoundsWithin's.
  EXPECT_EQ(TimedPlansWithin(20000, {100, 100, 100}, {false, true, false}, true, &keep), 5);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 1, 2}));
  // The plans that must stay do not fit on their own: nothing is timed.
  EXPECT_EQ(TimedPlansWithin(20000, {900, 900, 900}, {false, true, false}, true, &keep), 0);
  EXPECT_TRUE(keep.empty());
  // Fewer than two left: nothing is timed.
  EXPECT_EQ(TimedPlansWithin(20000, {4000, 4000}, {false, true}, true, &keep), 0);
  EXPECT_TRUE(keep.empty());
  EXPECT_EQ(TimedPlansWithin(20000, {100}, {false}, true, &keep), 0);
  EXPECT_TRUE(keep.empty());
}

// Where the full pattern keeps fewer than two plans, the light one: a block of two calls per round, out of place only,
// no settling call; its plans leave as the full pattern's do.
TEST(Calibration, LongCallsTheFullPatternCannotFitAreTimedLight) {
  std::vector<size_t> keep;
  // The full pattern fits: it is TimedPlansWithin's.
  TimingPattern how =
      TimingWithin(20000, {300, 300, 300, 300, 300}, {false, true, true, false, false}, true, 20000, &keep);
  EXPECT_EQ(how.rounds, 2);
  EXPECT_TRUE(how.settle);
  EXPECT_EQ(how.block, 2);
  EXPECT_TRUE(how.inPlaceToo);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 1, 3, 4}));
  // 900 + 1000 + 1200 us in place: the full pattern keeps only plan 0 ((20000 / 3800 - 1) / 3 = 1.4 rounds for
  // plans 0 and 1). Light: 3100 us a call, (20000 / 3100 - 1) / 2 = 2.7 rounds, all three plans.
  how = TimingWithin(20000, {900, 1000, 1200}, {false, true, true}, true, 20000, &keep);
  EXPECT_EQ(how.rounds, 2);
  EXPECT_FALSE(how.settle);
  EXPECT_EQ(how.block, 2);
  EXPECT_FALSE(how.inPlaceToo);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 1, 2}));
  // Light, plans leaving: 8000 us a call fits (2.5 - 1) / 2 = 0.75 rounds; without plan 2, 4000 us, (5 - 1) / 2 = 2.
  how = TimingWithin(20000, {2000, 2000, 4000}, {false, true, true}, true, 20000, &keep);
  EXPECT_EQ(how.rounds, 2);
  EXPECT_FALSE(how.settle);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 1}));
  // Light timing not allowed (one host): nothing is timed where the full pattern keeps fewer than two plans.
  how = TimingWithin(20000, {900, 1000, 1200}, {false, true, true}, true, 0, &keep);
  EXPECT_EQ(how.rounds, 0);
  EXPECT_TRUE(keep.empty());
  // Not even two plans of light rounds: nothing is timed.
  how = TimingWithin(20000, {4000, 4000, 4000}, {false, true, true}, true, 20000, &keep);
  EXPECT_EQ(how.rounds, 0);
  EXPECT_TRUE(keep.empty());
  // A larger light budget serves the plans that are not droppable alone: plans 0 and 2 of 2200 us need (2 x 2 + 1) x
  // 4400 = 22000 us for two light rounds, over 20 ms; within 30 ms they are timed, 2 rounds ((30000 / 4400 - 1) / 2 =
  // 2.9), and the droppable plan 1, which would fit beside them in 30 ms ((30000 / 5400 - 1) / 2 = 2.3), is not.
  how = TimingWithin(20000, {2200, 1000, 2200}, {false, true, false}, true, 20000, &keep);
  EXPECT_EQ(how.rounds, 0);
  how = TimingWithin(20000, {2200, 1000, 2200}, {false, true, false}, true, 30000, &keep);
  EXPECT_EQ(how.rounds, 2);
  EXPECT_FALSE(how.settle);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 2}));
  // Where 20 ms fit, the larger budget changes nothing: all three in (20000 / 2800 - 1) / 2 = 3 rounds; plan 1 dropped
  // to fit ((20000 / 4800 - 1) / 2 = 1.6, without it (20000 / 3800 - 1) / 2 = 2.1).
  how = TimingWithin(20000, {1000, 800, 1000}, {false, true, false}, true, 30000, &keep);
  EXPECT_EQ(how.rounds, 3);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 1, 2}));
  how = TimingWithin(20000, {1900, 1000, 1900}, {false, true, false}, true, 30000, &keep);
  EXPECT_EQ(how.rounds, 2);
  EXPECT_EQ(keep, (std::vector<size_t>{0, 2}));
}

// The light pattern's calls: each plan once to line up, then a block of two per round, never in place.
TEST(Calibration, LightPatternRunsABlockPerRoundOutOfPlace) {
  WithRetries([&] {
    const RdAndRing c;
    int rdCalls = 0, ringCalls = 0, inPlace = 0;
    PlanRunner run = [&](const Plan& plan, const void* in, void* out) {
      if (AnswerFigures(plan, in, out, 4)) return Status::Ok();
      inPlace += in == out;
      ++(plan.algorithm == "rd" ? rdCalls : ringCalls);
      BusyUs(plan.algorithm == "rd" ? 500 : 250);
      return Status::Ok();
    };
    const std::vector<double> us = TimeRdAndRing(c, run, 3, false, false);
    EXPECT_EQ(rdCalls, 7);  // 1 + 3 x 2
    EXPECT_EQ(ringCalls, 7);
    EXPECT_EQ(inPlace, 0);
    EXPECT_GE(us[0], 500.0);
    EXPECT_LT(us[0], 750.0);
    EXPECT_GE(us[1], 250.0);
    EXPECT_LT(us[1], 500.0);
  });
}

// A close call: the two fastest figures within 1.15x of each other are timed again, and each becomes the mean of its
// two timings; a third, slower plan does not run again, and its figure moves as the pair's did. A clear lead, a single
// figure, or a pair too long for the budget runs nothing.
TEST(Calibration, ACloseCallIsTimedAgainAndTheFiguresAveraged) {
  WithRetries([&] {
    RdAndRing c;
    c.plans.insert(c.plans.begin(), BuildPlanWith(AlgoId::Rhd, c.desc, c.geo));  // rhd, rd, ring
    std::vector<float> send(c.desc.count, 1.0f), recv(c.desc.count);
    int rhdCalls = 0, rdCalls = 0, ringCalls = 0;
    PlanRunner run = [&](const Plan& plan, const void* in, void* out) {
      if (AnswerFigures(plan, in, out, 4)) return Status::Ok();
      if (plan.algorithm == "rhd") ++rhdCalls;
      if (plan.algorithm == "rd") ++rdCalls;
      if (plan.algorithm == "ring") ++ringCalls;
      BusyUs(plan.algorithm == "rd" ? 300 : 100);
      return Status::Ok();
    };
    auto look = [&](std::vector<double> us, double budgetUs, std::vector<size_t>* again) {
      rhdCalls = rdCalls = ringCalls = 0;
      EXPECT_TRUE(
          LookAgainAtCloseCall(c.geo, run, c.plans, send.data(), recv.data(), budgetUs, false, 0, 1.15, &us, again)
              .ok());
      return us;
    };
    std::vector<size_t> again;
    // rd 100 and the ring 110 us: within 1.15x. Their second timing (5 rounds of the full pattern: (20000 / 210 - 1) /
    // 3 rounds fit) measures rd at 300 and the ring at 100, so the means are about 200 and 105: the ring ahead now.
    std::vector<double> us = look({400, 100, 110}, 20000, &again);
    EXPECT_EQ(again, (std::vector<size_t>{1, 2}));
    EXPECT_EQ(rhdCalls, 0);
    EXPECT_EQ(rdCalls, 16);  // 1 to line up, 5 rounds of a settling call and a block of two
    EXPECT_EQ(ringCalls, 16);
    EXPECT_GE(us[1], 200.0);
    EXPECT_LT(us[1], 260.0);
    EXPECT_GE(us[2], 105.0);
    EXPECT_LT(us[2], 140.0);
    // rhd, not timed again, moves as the pair's sum did: from 210 to us[1] + us[2].
    EXPECT_NEAR(us[0], 400 * (us[1] + us[2]) / 210, 1e-6);
    // A third close behind the pair: rd 50, the ring 52, rhd 58. The pair's second timing (rd 300, the ring 100) leaves
    // means of about 175 and 76; rhd's 58, timed once, would pass both. Moved by the pair's factor (about 251 / 102),
    // it stays behind the ring.
    us = look({58, 50, 52}, 20000, &again);
    EXPECT_EQ(again, (std::vector<size_t>{1, 2}));
    EXPECT_EQ(rhdCalls, 0);
    EXPECT_NEAR(us[0], 58 * (us[1] + us[2]) / 102, 1e-6);
    EXPECT_GT(us[0], us[2]);
    EXPECT_LT(us[2], us[1]);
    // The fastest two need not come first: the ring 100, rhd 110.
    us = look({110, 300, 100}, 20000, &again);
    EXPECT_EQ(again, (std::vector<size_t>{2, 0}));
    EXPECT_EQ(rdCalls, 0);
    EXPECT_EQ(rhdCalls, 16);
    // 1.2x apart: no second look.
    us = look({400, 100, 120}, 20000, &again);
    EXPECT_TRUE(again.empty());
    EXPECT_EQ(rhdCalls + rdCalls + ringCalls, 0);
    EXPECT_EQ(us, (std::vector<double>{400, 100, 120}));
    // One figure (the others not timed): nothing to compare.
    us = look({0, 100, 0}, 20000, &again);
    EXPECT_TRUE(again.empty());
    EXPECT_EQ(rhdCalls + rdCalls + ringCalls, 0);
    // Two rounds of the pair do not fit the budget: nothing runs.
    us = look({0, 9000, 9500}, 20000, &again);
    EXPECT_TRUE(again.empty());
    EXPECT_EQ(rhdCalls + rdCalls + ringCalls, 0);
    EXPECT_EQ(us, (std::vector<double>{0, 9000, 9500}));
  });
}

TEST(Calibration, NetworkLatencyIsWhatTheRingSpendsOnItsHopsBetweenHosts) {
  WithRetries([&] {
    const PlanGeometry geo = RankZeroOf({0, 0, 1, 1});
    CostInputs in = CostInputsFromGeometry(geo);
    CalibrationReport report;
    ASSERT_TRUE(CalibrateCostInputs(geo, FakeRunner(), &in, &report).ok());
    // 6 steps, half of them between hosts; the other half at the shared-memory latency, at most 1 us:
    // (60 - 3 x 1) / 3 = 19 us per hop between hosts, where 60 / 6 = 10 us would spread it over every hop.
    EXPECT_NEAR(in.inter.latencyUs, 19.0, 2.0);
    EXPECT_LE(in.intra.latencyUs, 1.0);
    EXPECT_NEAR(in.smallUs.at("direct"), 50.0, 10.0);
    EXPECT_NEAR(in.smallUs.at("rd"), 40.0, 10.0);
    EXPECT_NEAR(in.smallUs.at("hier"), 55.0, 10.0);
    EXPECT_NEAR(in.smallUs.at("ring"), 60.0, 10.0);
    EXPECT_EQ(in.smallUs.count("oneshot"), 0u);  // no peer-mapped windows between hosts: not timed
    EXPECT_NEAR(report.ringSmallUs, 60.0, 10.0);
    // Several hosts of two ranks: the rd/rhd scale measured at 1 MiB holds there, and from 2 MiB on rhd pays 1.20x
    // the ring's per-byte time at least (its separate copy passes); nothing is timed at 4 MiB.
    EXPECT_EQ(in.recursiveScaleBytes, 1u << 20);
    EXPECT_EQ(in.recursiveScaleLargeBytes, 2u << 20);
    EXPECT_GE(in.recursiveScaleLarge, 1.20);
    EXPECT_GE(in.recursiveScaleLarge, in.recursiveScale);
    EXPECT_EQ(report.wideBytes, 0u);
  });
}

// 4 hosts x 1 rank; a small ring allreduce takes 60 us, a 1 MiB ring `ringUs` and a 1 MiB rhd `rhdUs`, a 4 MiB ring
// `ringWideUs` and rhd `rhdWideUs` (0: 4x the 1 MiB time); `*wideCalls` counts the 4 MiB calls.
PlanRunner FourHostsRunner(double ringUs, double rhdUs, double ringWideUs = 0, double rhdWideUs = 0,
                           int* wideCalls = nullptr) {
  return [=](const Plan& plan, const void* send, void* recv) {
    if (AnswerFigures(plan, send, recv, 4)) return Status::Ok();
    const uint64_t bytes = PlanElems(plan) * sizeof(float);
    const bool small = bytes <= 256, wide = bytes >= (4u << 20);
    if (wide && wideCalls) ++*wideCalls;
    if (plan.algorithm == "ring") BusyUs(small ? 60 : !wide ? ringUs : ringWideUs > 0 ? ringWideUs : 4 * ringUs);
    if (plan.algorithm == "rhd") BusyUs(small ? 40 : !wide ? rhdUs : rhdWideUs > 0 ? rhdWideUs : 4 * rhdUs);
    return Status::Ok();
  };
}

// Between hosts, a 1 MiB ring that takes 10 ms or more is link-bound: rhd's scale is at least 1.10 there,
// whatever its lone calls measured. A shorter one keeps the scale measured.
TEST(Calibration, ALinkBoundMegabyteGivesTheRingTheTies) {
  WithRetries([&] {
    const PlanGeometry geo = RankZeroOf({0, 1, 2, 3});
    CostInputs slow = CostInputsFromGeometry(geo);
    int wideCalls = 0;
    ASSERT_TRUE(CalibrateCostInputs(geo, FourHostsRunner(12000, 11000, 0, 0, &wideCalls), &slow, nullptr).ok());
    EXPECT_GE(slow.recursiveScale, 1.10);
    // Link-bound: no 4 MiB calls (each would be its bytes on the link, 48 ms here), and rhd pays at least 1.20x the
    // ring's per-byte time from 2 MiB.
    EXPECT_EQ(wideCalls, 0);
    EXPECT_EQ(slow.recursiveScaleLargeBytes, 2u << 20);
    EXPECT_GE(slow.recursiveScaleLarge, 1.20);
    EXPECT_GE(slow.recursiveScaleLarge, slow.recursiveScale);
    CostInputs fast = CostInputsFromGeometry(geo);
    ASSERT_TRUE(CalibrateCostInputs(geo, FourHostsRunner(6000, 4000), &fast, nullptr).ok());
    EXPECT_LT(fast.recursiveScale, 1.0);  // rhd's lone calls at two thirds of the ring's time
    EXPECT_EQ(fast.recursiveScaleLargeBytes, 4u << 20);
  });
}

// Between hosts of one rank each over a network that is not link-bound, rhd's large scale is what its 4 MiB calls
// measured against the ring's, either way: how much its separate copy passes cost depends on the host, not on the 1 MiB
// call (where rhd is 1.6x faster in both cases below, by its shorter latency).
TEST(Calibration, BetweenHostsTheLargeScaleIsMeasuredAtFourMegabytes) {
  WithRetries([&] {
    const PlanGeometry geo = RankZeroOf({0, 1, 2, 3});
    const struct {
      double ringWideUs, rhdWideUs;
      const char* at64MiB;  // the model's choice of the two at 64 MiB
    } cases[] = {{10000, 8000, "rhd"}, {10000, 13000, "ring"}};
    for (const auto& c : cases) {
      CostInputs in = CostInputsFromGeometry(geo);
      CalibrationReport report;
      int wideCalls = 0;
      ASSERT_TRUE(
          CalibrateCostInputs(geo, FourHostsRunner(3600, 2250, c.ringWideUs, c.rhdWideUs, &wideCalls), &in, &report)
              .ok());
      EXPECT_LT(in.recursiveScale, 1.0);
      // Two rounds, not lined up: 2 calls of each.
      EXPECT_EQ(wideCalls, 4);
      EXPECT_EQ(in.recursiveScaleLargeBytes, 4u << 20);
      const double measured = report.recursiveWideUs / report.ringWideUs;
      EXPECT_NEAR(measured, c.rhdWideUs / c.ringWideUs, 0.05);
      for (uint64_t bytes : {4u << 20, 16u << 20, 64u << 20, 256u << 20}) {
        const double rhd = EstimateUs("rhd", CollKind::AllReduce, bytes, in);
        const double ring = EstimateUs("ring", CollKind::AllReduce, bytes, in);
        EXPECT_NEAR(rhd / ring, measured, 0.05) << bytes;
      }
      const bool rhdFaster = EstimateUs("rhd", CollKind::AllReduce, 64u << 20, in) <
                             EstimateUs("ring", CollKind::AllReduce, 64u << 20, in);
      EXPECT_EQ(rhdFaster ? "rhd" : "ring", std::string(c.at64MiB));
    }
  });
}

TEST(Calibration, OneHostMovesTheRecursiveScaleOutOfCache) {
  WithRetries([&] {
    PlanGeometry geo;
    geo.nranks = 4;
    geo.rank = 0;
    CostInputs in = CostInputsFromGeometry(geo);
    ASSERT_TRUE(CalibrateCostInputs(geo, FakeRunner(), &in, nullptr).ok());
    EXPECT_NEAR(in.intra.latencyUs, 10.0, 2.0);  // 60 us over 6 hops, all within the host
    EXPECT_EQ(in.smallUs.count("hier"), 0u);     // one host: hier would run the ring
    EXPECT_EQ(in.recursiveScaleBytes, 1u << 20);
    EXPECT_EQ(in.recursiveScaleLargeBytes, 0u);  // from 8 MiB, out of cache
    EXPECT_GE(in.recursiveScaleLarge, 5.0 / 3.0);
    EXPECT_GE(in.recursiveScaleLarge, in.recursiveScale);
  });
}

// Two ranks on one host also time rd and the ring at 128 KiB, and the scale taken from it gives the model's rd the
// ratio to the ring that was measured there; four ranks and several hosts do not.
TEST(Calibration, TwoRanksOnOneHostScaleRdInCache) {
  WithRetries([&] {
    const uint64_t mid = 128 << 10;
    const PlanGeometry geo = RankZeroOf({0, 0});
    // Small calls 20 us; at 1 MiB the ring 1600 us and rd 1920; at 128 KiB the ring 400 us and rd 360 (long enough that
    // a busy VM's preemptions stay within the margins below).
    PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
      if (AnswerFigures(plan, send, recv, 2)) return Status::Ok();
      const uint64_t bytes = PlanElems(plan) * sizeof(float);
      const bool rd = plan.algorithm == "rd";
      BusyUs(bytes <= 64 ? 20 : bytes <= mid ? (rd ? 360 : 400) : (rd ? 1920 : 1600));
      return Status::Ok();
    };
    CostInputs in = CostInputsFromGeometry(geo);
    CalibrationReport report;
    ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, &report).ok());
    EXPECT_EQ(report.midBytes, mid);
    EXPECT_NEAR(report.ringMidUs, 400.0, 30.0);
    EXPECT_NEAR(report.rdMidUs, 360.0, 30.0);
    ASSERT_EQ(in.recursiveScaleSmallBytes, mid);
    // The model's rd/ring ratio at 128 KiB is the measured one, whatever the ring's modelled time there. (The
    // model's rates are this machine's real reduce and copy loops: a sanitizer build reduces at a few GB/s, and a
    // scale that needs to fall under 0.5 is clamped there, leaving the model's rd the slower.)
    const double ratio =
        EstimateUs("rd", CollKind::AllReduce, mid, in) / EstimateUs("ring", CollKind::AllReduce, mid, in);
    if (in.recursiveScaleSmall > 0.5) {
      EXPECT_NEAR(ratio, report.rdMidUs / report.ringMidUs, 0.02);
    } else {
      EXPECT_GT(ratio, report.rdMidUs / report.ringMidUs);
    }
    // At 1 MiB the model's rd is the measured one, as before.
    if (in.recursiveScale > 0.5) {
      EXPECT_NEAR(EstimateUs("rd", CollKind::AllReduce, 1 << 20, in), report.rhdLargeUs, 0.02 * report.rhdLargeUs);
    }

    for (const std::vector<int>& hosts : {std::vector<int>{0, 0, 0, 0}, std::vector<int>{0, 1}}) {
      const PlanGeometry other = RankZeroOf(hosts);
      PlanRunner quick = [&](const Plan& plan, const void* send, void* recv) {
        AnswerFigures(plan, send, recv, other.nranks);
        return Status::Ok();
      };
      CostInputs o = CostInputsFromGeometry(other);
      CalibrationReport r;
      ASSERT_TRUE(CalibrateCostInputs(other, quick, &o, &r).ok());
      EXPECT_EQ(o.recursiveScaleSmallBytes, 0u) << other.nranks << " ranks";
      EXPECT_EQ(r.midBytes, 0u);
    }
  });
}

// From three ranks on one host rd is timed at 1 MiB too, and its factor over rhd's scale makes the model's rd the
// measured time there; between hosts it is not timed.
TEST(Calibration, RdGetsItsOwnScaleOnOneHost) {
  WithRetries([&] {
    const PlanGeometry geo = RankZeroOf({0, 0, 0, 0});
    // Small calls 20 us; at 1 MiB the ring 450 us, rhd 400, rd 600.
    PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
      if (AnswerFigures(plan, send, recv, 4)) return Status::Ok();
      const bool small = PlanElems(plan) <= 64;
      BusyUs(small ? 20 : plan.algorithm == "rd" ? 600 : plan.algorithm == "rhd" ? 400 : 450);
      return Status::Ok();
    };
    CostInputs in = CostInputsFromGeometry(geo);
    CalibrationReport report;
    ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, &report).ok());
    EXPECT_NEAR(report.rdLargeUs, 600.0, 60.0);
    // Unless a scale was clamped (see TwoRanksOnOneHostScaleRdInCache), the model gives each its measured time.
    const double rdScale = in.recursiveScale * in.rdScaleFactor;
    if (in.recursiveScale > 0.5 && rdScale > 0.5) {
      EXPECT_NE(in.rdScaleFactor, 1.0);
      EXPECT_NEAR(EstimateUs("rd", CollKind::AllReduce, 1 << 20, in), report.rdLargeUs, 0.02 * report.rdLargeUs);
      EXPECT_NEAR(EstimateUs("rhd", CollKind::AllReduce, 1 << 20, in), report.rhdLargeUs, 0.02 * report.rhdLargeUs);
    } else {
      EXPECT_GT(EstimateUs("rd", CollKind::AllReduce, 1 << 20, in), report.rdLargeUs);
    }

    const PlanGeometry twoHosts = RankZeroOf({0, 0, 1, 1});
    CostInputs two = CostInputsFromGeometry(twoHosts);
    CalibrationReport r;
    ASSERT_TRUE(CalibrateCostInputs(twoHosts, runner, &two, &r).ok());
    EXPECT_EQ(r.rdLargeUs, 0.0);
    EXPECT_EQ(two.rdScaleFactor, 1.0);
  });
}

TEST(Calibration, KindsAreTimedInterleaved) {
  WithRetries([&] {
    // A job that starts slow: its first 16 small calls take 2000 us, every later one 200 us, whatever the algorithm.
    // On this shape 4 kinds are timed (ring, direct, rd, tree): 16 calls are the ring call that lines the ranks up,
    // the line-up call of each and 11 of the first round's 12. That round's 22 ms leave the 8 ms budget the least
    // rounds, 2, and of two the lower decides: interleaved, every kind's figure is its fast round. Timed one kind after
    // another, the ring (timed first) would carry the slow start in both of its rounds.
    const PlanGeometry geo = RankZeroOf({0, 0, 0, 0});
    int calls = 0;
    PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
      if (AnswerFigures(plan, send, recv, 4)) return Status::Ok();
      if (PlanElems(plan) <= 64) BusyUs(calls++ < 16 ? 2000 : 200);
      return Status::Ok();
    };
    CostInputs in = CostInputsFromGeometry(geo);
    ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, nullptr).ok());
    ASSERT_EQ(in.smallUs.size(), 4u);
    for (const auto& [name, us] : in.smallUs) EXPECT_LT(us, 1000.0) << name;
  });
}

// The rounds after the first: as many as fit the budget by the first one's time (8 ms for the small calls, at least
// 2 and at most 6 rounds; 10 ms for the 1 MiB calls, at least 1 and at most 3). Counted per kind: one line-up call
// and per round a settling call and a block of two for the small calls, one call per round for the 1 MiB ones (no
// line-up call); the ring has one small call more, the first, that lines the ranks up.
TEST(Calibration, RoundsAfterTheFirstFitTheBudget) {
  WithRetries([&] {
    const PlanGeometry geo = RankZeroOf({0, 0, 0, 0});
    for (const auto& [smallUs, largeUs, smallRounds, largeRounds] :
         std::vector<std::tuple<double, double, int, int>>{{20, 500, 6, 3}, {1500, 6000, 2, 1}, {300, 1200, 2, 2}}) {
      std::map<std::pair<std::string, bool>, int> calls;  // (algorithm, small) -> calls
      PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
        if (AnswerFigures(plan, send, recv, 4)) return Status::Ok();
        const bool small = PlanElems(plan) <= 64;
        ++calls[{plan.algorithm, small}];
        BusyUs(small ? smallUs : largeUs);
        return Status::Ok();
      };
      CostInputs in = CostInputsFromGeometry(geo);
      CalibrationReport report;
      ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, &report).ok());
      const std::string what = std::to_string(smallUs) + " us / " + std::to_string(largeUs) + " us calls";
      auto count = [&calls](const std::string& kind, bool small) { return calls[std::make_pair(kind, small)]; };
      for (const char* kind : {"direct", "rd", "tree"}) EXPECT_EQ(count(kind, true), 1 + 3 * smallRounds) << what;
      EXPECT_EQ(count("ring", true), 2 + 3 * smallRounds) << what;
      for (const char* kind : {"ring", "rhd", "rd"}) EXPECT_EQ(count(kind, false), largeRounds) << what;
      EXPECT_GE(report.waitMs, smallUs / 1e3 * 0.9) << what;  // the lining-up call
      EXPECT_GT(report.smallMs, 0.0);
      EXPECT_GT(report.largeMs, 0.0);
    }
  });
}

// Across hosts every round runs, however long, and each kind of 1 MiB call is lined up first.
TEST(Calibration, AcrossHostsEveryRoundRuns) {
  const PlanGeometry geo = RankZeroOf({0, 0, 1, 1});
  std::map<std::pair<std::string, uint64_t>, int> calls;  // (algorithm, bytes: 0 small) -> calls
  PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
    if (AnswerFigures(plan, send, recv, 4)) return Status::Ok();
    const bool small = PlanElems(plan) <= 64;
    ++calls[{plan.algorithm, small ? 0 : PlanElems(plan) * sizeof(float)}];
    BusyUs(small ? 1500 : 6000);  // rounds far over the budgets
    return Status::Ok();
  };
  CostInputs in = CostInputsFromGeometry(geo);
  ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, nullptr).ok());
  auto count = [&calls](const std::string& kind, uint64_t bytes) { return calls[std::make_pair(kind, bytes)]; };
  for (const char* kind : {"rd", "hier", "hier_leader"}) EXPECT_EQ(count(kind, 0), 1 + 3 * 6) << kind;
  EXPECT_EQ(count("ring", 0), 2 + 3 * 6);
  for (const char* kind : {"ring", "rhd"}) {
    EXPECT_EQ(count(kind, 1 << 20), 1 + 3) << kind;
    EXPECT_EQ(count(kind, 4 << 20), 0) << kind;  // two ranks a host: not timed at 4 MiB
  }
  EXPECT_EQ(count("rd", 1 << 20), 0);  // rd's own 1 MiB scale is for one host
}

// Where a host runs more ranks than cores, only its first rank measures the local rates; elsewhere every rank does.
TEST(Calibration, OnlyEachHostsFirstRankMeasuresLocalRatesWhereRanksOutnumberCores) {
  for (const auto& [hostOf, measuring] :
       std::vector<std::pair<std::vector<int>, std::vector<bool>>>{{{0, 0, 0, 0}, {true, false, false, false}},
                                                                   {{0, 0, 1, 1}, {true, false, true, false}},
                                                                   {{0, 1, 0, 1}, {true, true, false, false}},
                                                                   {{}, {true, false, false}}}) {
    PlanGeometry geo;
    geo.nranks = static_cast<int>(measuring.size());
    geo.hostOf = hostOf;
    for (int r = 0; r < geo.nranks; ++r) {
      geo.rank = r;
      geo.oversubscribed = false;
      EXPECT_TRUE(MeasuresLocalRates(geo)) << "rank " << r;
      geo.oversubscribed = true;
      EXPECT_EQ(MeasuresLocalRates(geo), measuring[r]) << "rank " << r << " of " << geo.nranks;
    }
  }
}

// A rank that does not measure the local rates sends 0 for them, and the rates come from the ranks that did: rank 1
// of 4 ranks on one host, where only rank 0 measured (its reduction and its copy of 1 MiB took 100 us each).
TEST(Calibration, LocalRatesComeFromTheRanksThatMeasuredThem) {
  PlanGeometry geo = RankZeroOf({0, 0, 0, 0});
  geo.rank = 1;
  const int p = geo.nranks;
  auto figuresSent = [&](bool oversubscribed) {
    geo.oversubscribed = oversubscribed;
    std::vector<double> sent;
    PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
      if (!AnswerFigures(plan, send, recv, p)) return Status::Ok();
      const uint64_t figures = FigureCount(plan);
      sent.assign(static_cast<const double*>(send), static_cast<const double*>(send) + figures);
      return Status::Ok();
    };
    CostInputs in = CostInputsFromGeometry(geo);
    EXPECT_TRUE(CalibrateCostInputs(geo, runner, &in, nullptr).ok());
    return sent;  // the last allgather's: the figures
  };
  const std::vector<double> measured = figuresSent(false), unmeasured = figuresSent(true);
  ASSERT_EQ(measured.size(), unmeasured.size());
  std::vector<size_t> rates;  // the figures only a measuring rank sends
  for (size_t f = 0; f < measured.size(); ++f)
    if (measured[f] > 0 && unmeasured[f] == 0) rates.push_back(f);
  ASSERT_EQ(rates.size(), 2u);

  // Rank 0 measured 100 us for each; ranks 1-3 sent 0. The median over every rank would be 0 (an unbounded rate).
  const double rateUs = 100;
  PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
    if (!AnswerFigures(plan, send, recv, p)) return Status::Ok();
    const uint64_t figures = FigureCount(plan);
    if (figures == measured.size())
      for (size_t f : rates) static_cast<double*>(recv)[f] = rateUs;  // rank 0's
    return Status::Ok();
  };
  geo.oversubscribed = true;
  CostInputs in = CostInputsFromGeometry(geo);
  ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, nullptr).ok());
  const double gbs = (1 << 20) / rateUs / 1e3;
  EXPECT_NEAR(in.reduceGBs, gbs, 1e-9);
  EXPECT_NEAR(in.copyGBs, gbs, 1e-9);
}

TEST(Calibration, SmallCallsCarryAnElementPerRank) {
  // 8 bytes on 8 ranks would leave six of the ring's eight chunks empty and their steps out of the timing.
  for (int p : {2, 4, 8, 64}) {
    const PlanGeometry geo = RankZeroOf(std::vector<int>(p, 0));
    uint64_t smallest = UINT64_MAX;
    PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
      if (!AnswerFigures(plan, send, recv, p)) smallest = std::min(smallest, PlanElems(plan));
      return Status::Ok();
    };
    CostInputs in = CostInputsFromGeometry(geo);
    CalibrationReport report;
    ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, &report).ok());
    EXPECT_EQ(smallest, static_cast<uint64_t>(std::max(p, 2))) << p << " ranks";
    EXPECT_EQ(report.smallBytes, std::max<uint64_t>(8, 4u * p));
  }
}

// On one host of up to 4 ranks a slot-store probe runs the 1 MiB ring with ordinary and with streaming stores, and the
// rank's tuner starts in the faster (1.1x at least) before the 1 MiB calls that follow, which then run in it: the
// ring's figure is the faster mode's. Without a probe, across hosts or on more ranks nothing is probed.
TEST(Calibration, TheSlotStoreProbeStartsTheTunerInTheFasterMode) {
  const uint64_t mib = 1 << 20;
  for (const auto& [cachedUs, streamingUs] :
       std::vector<std::pair<double, double>>{{900, 300}, {300, 900}, {300, 310}}) {
    WithRetries([&] {
      bool started = false, told = false;  // what the tuner was told, the mode the runner's calls use
      int probed = 0;
      auto ringUs = [&](bool streaming, uint64_t bytes) {
        return bytes < mib ? 20.0 : streaming ? streamingUs : cachedUs;
      };
      const PlanGeometry geo = RankZeroOf({0, 0});
      PlanRunner runner = [&](const Plan& plan, const void* send, void* recv) {
        if (AnswerFigures(plan, send, recv, 2)) return Status::Ok();
        const uint64_t bytes = PlanElems(plan) * sizeof(float);
        BusyUs(plan.algorithm == "ring" ? ringUs(started, bytes) : bytes < mib ? 20.0 : 400.0);
        return Status::Ok();
      };
      SlotStoreProbe stores;
      stores.run = [&](const Plan& plan, const void*, void*, bool streaming) {
        EXPECT_EQ(plan.algorithm, "ring");
        EXPECT_EQ(PlanElems(plan) * sizeof(float), mib);
        ++probed;
        BusyUs(ringUs(streaming, mib));
        return Status::Ok();
      };
      stores.startIn = [&](bool streaming) {
        EXPECT_FALSE(told) << "told once";
        told = true;
        started = streaming;
      };
      CostInputs in = CostInputsFromGeometry(geo);
      CalibrationReport report;
      ASSERT_TRUE(CalibrateCostInputs(geo, runner, &in, &report, stores).ok());
      EXPECT_TRUE(told);
      EXPECT_GE(probed, 2 + 2 * 2) << "lined up, then a block of two of each mode per round";
      EXPECT_NEAR(report.slotCachedUs, cachedUs, 0.15 * cachedUs);
      EXPECT_NEAR(report.slotStreamingUs, streamingUs, 0.15 * streamingUs);
      const bool faster = cachedUs > 1.1 * streamingUs;
      EXPECT_EQ(started, faster);
      EXPECT_EQ(report.slotStreaming, faster);
      // The calibration's own 1 MiB ring ran in the mode the tuner started in.
      const double ran = faster ? streamingUs : cachedUs;
      EXPECT_NEAR(report.ringLargeUs, ran, 0.15 * ran);
    });
  }
  // Not probed: no probe given, two hosts, more than 4 ranks.
  for (const std::vector<int>& hosts : {std::vector<int>{0, 0}, std::vector<int>{0, 1}, std::vector<int>(5, 0)}) {
    const PlanGeometry geo = RankZeroOf(hosts);
    int probed = 0;
    PlanRunner quick = [&](const Plan& plan, const void* send, void* recv) {
      AnswerFigures(plan, send, recv, geo.nranks);
      return Status::Ok();
    };
    SlotStoreProbe stores;
    if (hosts.size() != 2 || hosts[1] != 0)
      stores.run = [&](const Plan&, const void*, void*, bool) {
        ++probed;
        return Status::Ok();
      };
    CostInputs in = CostInputsFromGeometry(geo);
    CalibrationReport report;
    ASSERT_TRUE(CalibrateCostInputs(geo, quick, &in, &report, stores).ok());
    EXPECT_EQ(probed, 0) << hosts.size() << " ranks";
    EXPECT_EQ(report.slotCachedUs, 0.0);
    EXPECT_FALSE(report.slotStreaming);
  }
}

}  // namespace
}  // namespace strata
