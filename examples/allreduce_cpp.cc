// strata from C++: a communicator owned by a unique_ptr, failures turned into exceptions, and a
// global mean and maximum of per-rank std::vector data, checked by every rank.
// Run it with any launcher, e.g. `build/bin/stratarun -n 4 build/bin/allreduce_cpp`.
#include <strata/strata.h>

#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

void Check(strataResult_t rc, const char* what) {
  if (rc != strataSuccess)
    throw std::runtime_error(std::string(what) + ": " + strataGetErrorString(rc) + " (" + strataGetLastError(nullptr) + ")");
}

struct CommDeleter {
  void operator()(strataComm* comm) const { strataCommDestroy(comm); }
};
using Comm = std::unique_ptr<strataComm, CommDeleter>;

Comm CommFromEnv() {
  strataComm_t comm = nullptr;
  Check(strataCommInitFromEnv(&comm, nullptr), "init");
  return Comm(comm);
}

}  // namespace

int main() try {
  Comm comm = CommFromEnv();
  int rank = 0, nranks = 0;
  Check(strataCommUserRank(comm.get(), &rank), "rank");
  Check(strataCommCount(comm.get(), &nranks), "count");

  // Rank r holds r + i at index i: the mean over ranks is (nranks - 1) / 2 + i, the maximum nranks - 1 + i.
  std::vector<double> data(4096), mean(data.size()), max(data.size());
  for (size_t i = 0; i < data.size(); ++i) data[i] = rank + static_cast<double>(i);
  Check(strataAllReduce(data.data(), mean.data(), data.size(), strataFloat64, strataAvg, comm.get(), nullptr), "avg");
  Check(strataAllReduce(data.data(), max.data(), data.size(), strataFloat64, strataMax, comm.get(), nullptr), "max");

  size_t wrong = 0;
  for (size_t i = 0; i < data.size(); ++i)
    wrong += mean[i] != (nranks - 1) / 2.0 + static_cast<double>(i) || max[i] != nranks - 1 + static_cast<double>(i);
  if (rank == 0) std::printf("mean and max over %d ranks: %zu wrong of %zu\n", nranks, wrong, data.size());
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "strata: %s\n", e.what());
  return 1;
}
