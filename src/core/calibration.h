// The cost model's inputs for one communicator: the shape (ranks, hosts) from its geometry, link
// costs from a short measurement made when it is created (a few ring allreduces and local
// reduce/copy loops), agreed by every rank so that all of them choose the same algorithms.
#pragma once

#include <functional>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/cost_model.h"
#include "algorithms/plan.h"
#include "core/status.h"

namespace strata {

// Shape and defaults without measuring: hosts from geo.hostOf, the documented default link costs.
CostInputs CostInputsFromGeometry(const PlanGeometry& geo);

// The small allreduce the calibration times every small-message algorithm with: one float per rank, at least
// 8 bytes (fewer elements than ranks would leave ring steps out).
uint64_t SmallCalibrationBytes(int nranks);

// Runs one plan on every rank of the communicator (send, recv: host buffers of the plan's sizes).
using PlanRunner = std::function<Status(const Plan& plan, const void* send, void* recv)>;

struct CalibrationReport {
  double ringSmallUs = 0;  // `smallBytes` ring allreduce, per call (the median over the ranks)
  uint64_t smallBytes = 0;
  double ringLargeUs = 0;  // `largeBytes` ring allreduce
  double rhdLargeUs = 0;   // `largeBytes` rhd allreduce (rd on 2 ranks, where rhd is the ring's exchange)
  double rdLargeUs = 0;    // `largeBytes` rd allreduce, from 3 ranks on one host (else 0)
  uint64_t largeBytes = 0;
  double ringMidUs = 0;  // `midBytes` ring allreduce (two ranks on one host only, else 0)
  double rdMidUs = 0;    // `midBytes` rd allreduce
  uint64_t midBytes = 0;
  double elapsedMs = 0;    // the whole calibration on this rank
};

// Measures link latency and bandwidth with ring allreduces, and this host's reduce and copy rates,
// then takes the median over the ranks of each figure (an allgather) so every rank ends with the same inputs.
// Between hosts the ring's slowest link is the network; within one host it is shared memory.
Status CalibrateCostInputs(const PlanGeometry& geo, const PlanRunner& run, CostInputs* inout,
                           CalibrationReport* report);

// The rounds of TimePlansAlike that fit `budgetUs` when one run of every plan takes `usPerRunOfAll` together: at most
// 5, and 0 when fewer than 2 fit.
int TimedRoundsWithin(double budgetUs, double usPerRunOfAll, bool inPlaceToo);

// Which plans to time within `budgetUs`, one run of plan i taking `usPerRun[i]`: all of them where two rounds fit;
// otherwise the plans marked `droppable` leave, the last first, until two rounds fit the rest. `*keep` gets the
// indices kept, in order; returns their rounds, 0 when two rounds fit no set of at least two plans.
int TimedPlansWithin(double budgetUs, const std::vector<double>& usPerRun, const std::vector<bool>& droppable,
                     bool inPlaceToo, std::vector<size_t>* keep);

// Each of `plans` (one collective by several algorithms, each plan built for buffers `send` and `recv`) timed the
// way the calibration times its calls: once each to line the ranks up, then `rounds` rounds in which each runs a
// settling call and two timed back to back; with `inPlaceToo` every call is an out-of-place and an in-place run (`recv`
// as both buffers). `*us` gets each plan's time per run, the median over its rounds and then over the ranks, so that
// every rank holds the same figures.
Status TimePlansAlike(const PlanGeometry& geo, const PlanRunner& run, const std::vector<Plan>& plans, const void* send,
                      void* recv, bool inPlaceToo, int rounds, std::vector<double>* us);

}  // namespace strata
