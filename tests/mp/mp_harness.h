// The multi-process harness: forks N ranks that share one real communicator (over shared memory or
// TCP), runs a function on each, and collects what failed. A rank that hangs is killed at the
// harness timeout and reported; nothing outlives the call.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/call_trial.h"
#include "strata/strata.h"

namespace strata {
namespace test {

struct MpOptions {
  int nranks = 2;
  bool tcp = false;      // STRATA_SHM_DISABLE for every rank
  int nodes = 1;         // ranks split into this many fake hosts (STRATA_HOSTID), TCP between them
  int timeoutSec = 300;  // the whole run
  int commTimeoutMs = 60000;
  bool destroyComm = true;  // false: the rank function destroys or aborts the communicator itself
  // In each rank before it makes its communicator (e.g. to start an attacker thread).
  std::function<void(int rank)> beforeInit;
  // In the test process once the unique id exists, before any rank has it (e.g. to attack the root).
  std::function<void(const strataUniqueId& id)> onUniqueId;
};

// What a rank reports: empty when it passed, else what went wrong.
using RankFn = std::function<std::string(int rank, int nranks, strataComm_t comm)>;

struct MpResult {
  std::vector<std::string> failures;  // "rank 2: ..." for each rank that failed
  bool ok() const { return failures.empty(); }
  std::string summary() const;
};

MpResult RunRanks(const MpOptions& options, const RankFn& fn);

// Same, without making a communicator: the function gets a null comm (for tests of init itself).
MpResult RunProcesses(const MpOptions& options, const RankFn& fn);

// Whether this process can read and write a child's memory with process_vm_readv/writev (cross-memory attach), as
// the ranks of a communicator on this host will try to: tests expect the in-place one/two-shot plans only then.
bool CrossMemoryAttachWorks();

// kB on transparent huge pages (AnonHugePages) of this process's mapping that holds `at`, read from /proc/self/smaps;
// -1 where no mapping holds it. `start`, if given, gets the mapping's first address (two buffers' mappings may be one).
long HugeKbOfMapping(const void* at, uintptr_t* start = nullptr);
// Whether the kernel collapses written anonymous memory onto a 2 MiB page when asked (madvise MADV_COLLAPSE), seen in
// /proc/self/smaps: found without the library, so that its own probe (HugePagesCollapse) can be checked against it
// and tests expect huge pages only where the kernel gives them.
bool KernelCollapsesHugePages();

// One float32 allreduce, allgather or reduce-scatter (sums) of `count` elements (the API's count) on rank r of n, from
// buffer `a` into buffer `b`, or in place within `b` at NCCL's offsets; input element i of rank q is in(q, i). Checks
// every output element against a float64 sum. Returns "" or what went wrong, prefixed with `what`; *ran (optional):
// the algorithm the call ran.
enum class FamilyColl { kAllReduce, kAllGather, kReduceScatter };
const char* FamilyCollName(FamilyColl c);  // "allreduce", "allgather", "reducescatter"
std::string RunAndCheckFamilyCall(FamilyColl c, strataComm_t comm, int r, int n, size_t count, bool inPlace, float* a,
                                  float* b, const std::function<float(int, size_t)>& in, const std::string& what,
                                  std::string* ran = nullptr);

// How a communicator's size-class trial takes its turns (Communicator::kClassTrialTurns).
constexpr CallTrial::Shape kClassTurns = CallTrial::kRunTurns;

// The number of plans whose CallTrial turns, in `shape`, the calls named in `ran` follow from its first, all of a
// trial's calls (their names the first round's, all different): 0 if no whole trial of 2 to CallTrial::kMaxPlans plans
// does.
int CallTrialPlansIn(const std::vector<std::string>& ran, CallTrial::Shape shape = kClassTurns);

}  // namespace test
}  // namespace strata
