// strata_resources: what one communicator costs a rank, measured from /proc: descriptors, threads, resident
// and mapped memory after init and after a 16 MiB allreduce, and what is left after destroy.
//   stratarun -n 4 build/bin/strata_resources                       (shared memory)
//   stratarun -n 4 -x STRATA_SHM_DISABLE=1 build/bin/strata_resources   (TCP)
// Rank 0 prints one table row per measurement point (max over ranks; per-peer figures divide by n-1).
#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "strata/strata.h"

namespace {

struct Usage {
  int64_t fds = 0, threads = 0, rss = 0, vm = 0;
};

Usage Measure() {
  Usage u;
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* e = readdir(d)) u.fds += e->d_name[0] != '.';
    closedir(d);
  }
  if (FILE* f = fopen("/proc/self/status", "r")) {
    char line[256];
    while (fgets(line, sizeof(line), f)) {
      long v = 0;
      if (sscanf(line, "Threads: %ld", &v) == 1) u.threads = v;
    }
    fclose(f);
  }
  if (FILE* f = fopen("/proc/self/statm", "r")) {
    long vm = 0, rss = 0;
    if (fscanf(f, "%ld %ld", &vm, &rss) == 2) u.vm = vm * sysconf(_SC_PAGESIZE), u.rss = rss * sysconf(_SC_PAGESIZE);
    fclose(f);
  }
  return u;
}

bool Check(strataResult_t rc, const char* what) {
  if (rc == strataSuccess) return true;
  fprintf(stderr, "strata_resources: %s failed: %s\n", what, strataGetLastError(nullptr));
  return false;
}

}  // namespace

int main() {
  // Settle what the C++ runtime and the allocator set up before the baseline.
  std::vector<float> in(4 << 20, 1.0f), out(4 << 20, 0.0f);
  const Usage before = Measure();
  strataComm_t comm = nullptr;
  if (!Check(strataCommInitFromEnv(&comm, nullptr), "init")) return 2;
  int rank = 0, n = 1;
  (void)strataCommUserRank(comm, &rank);
  (void)strataCommCount(comm, &n);
  // Rank 0's bootstrap root thread closes its sockets just after init returns.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Usage afterInit = Measure();
  if (!Check(strataAllReduce(in.data(), out.data(), in.size(), strataFloat32, strataSum, comm, nullptr), "allreduce"))
    return 2;
  const Usage afterCall = Measure();
  // Gather before destroying: every rank's deltas, as int64.
  const Usage points[2] = {afterInit, afterCall};
  int64_t mine[8];
  for (int p = 0; p < 2; ++p) {
    mine[4 * p + 0] = points[p].fds - before.fds;
    mine[4 * p + 1] = points[p].threads - before.threads;
    mine[4 * p + 2] = points[p].rss - before.rss;
    mine[4 * p + 3] = points[p].vm - before.vm;
  }
  std::vector<int64_t> all(8 * n);
  if (!Check(strataAllGather(mine, all.data(), 8, strataInt64, comm, nullptr), "allgather")) return 2;
  if (!Check(strataCommDestroy(comm), "destroy")) return 2;
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const Usage afterDestroy = Measure();
  if (rank == 0) {
    const char* labels[2] = {"after init", "after 16 MiB allreduce"};
    for (int p = 0; p < 2; ++p) {
      int64_t mx[4] = {0, 0, 0, 0};
      for (int q = 0; q < n; ++q)
        for (int k = 0; k < 4; ++k) mx[k] = std::max(mx[k], all[8 * q + 4 * p + k]);
      printf("| %d | %s | %lld | %.1f | %lld | %.1f | %.1f |\n", n, labels[p], static_cast<long long>(mx[0]),
             n > 1 ? static_cast<double>(mx[0]) / (n - 1) : 0.0, static_cast<long long>(mx[1]), mx[2] / 1048576.0,
             mx[3] / 1048576.0);
    }
    printf("rank 0 after destroy: %+lld fds, %+lld threads, %+.1f MiB resident, %+.1f MiB mapped\n",
           static_cast<long long>(afterDestroy.fds - before.fds),
           static_cast<long long>(afterDestroy.threads - before.threads), (afterDestroy.rss - before.rss) / 1048576.0,
           (afterDestroy.vm - before.vm) / 1048576.0);
  }
  return 0;
}
