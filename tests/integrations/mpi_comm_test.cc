// strataCommInitFromMPI on MPI_COMM_WORLD, a split (reversed keys), a dup with TCP only, MPI_COMM_SELF,
// and its argument errors; results checked against MPI's own collectives. Run under mpirun; any
// failure aborts the whole job (MPI_Abort), so a failing rank never leaves the others waiting.
#include <mpi.h>
#include <strata/strata_mpi.h>

#include <cstdio>
#include <vector>

namespace {

int worldRank = -1;

#define EXPECT_OR_ABORT(cond, ...)                                                                 \
  do {                                                                                            \
    if (!(cond)) {                                                                                \
      fprintf(stderr, "rank %d: %s:%d: %s failed: ", worldRank, __FILE__, __LINE__, #cond);       \
      fprintf(stderr, __VA_ARGS__);                                                               \
      fprintf(stderr, " (last strata error: %s)\n", strataGetLastError(nullptr));                 \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                               \
    }                                                                                             \
  } while (0)

#define STRATA_OK(call)                                                                           \
  do {                                                                                            \
    strataResult_t rc_ = (call);                                                                  \
    EXPECT_OR_ABORT(rc_ == strataSuccess, "%s", strataGetErrorString(rc_));                       \
  } while (0)

// The strata communicator must have the MPI communicator's ranks, and its allreduce (int64 sum,
// double max) must equal MPI_Allreduce on the same inputs.
void CheckAgainstMpi(MPI_Comm mpiComm, strataComm_t comm, const char* what) {
  int mpiRank, mpiSize, rank, nranks;
  MPI_Comm_rank(mpiComm, &mpiRank);
  MPI_Comm_size(mpiComm, &mpiSize);
  STRATA_OK(strataCommUserRank(comm, &rank));
  STRATA_OK(strataCommCount(comm, &nranks));
  EXPECT_OR_ABORT(rank == mpiRank && nranks == mpiSize, "%s: strata rank %d of %d, MPI rank %d of %d", what, rank,
                  nranks, mpiRank, mpiSize);

  const size_t count = 4099;  // odd, not a multiple of any rank count
  std::vector<int64_t> in(count), viaStrata(count), viaMpi(count);
  std::vector<double> din(count), dStrata(count), dMpi(count);
  for (size_t i = 0; i < count; ++i) {
    in[i] = static_cast<int64_t>(i) * (worldRank + 1) - 3 * worldRank;
    din[i] = static_cast<double>((i * 31 + static_cast<size_t>(worldRank) * 17) % 101) - 50.5;
  }
  STRATA_OK(strataAllReduce(in.data(), viaStrata.data(), count, strataInt64, strataSum, comm, nullptr));
  MPI_Allreduce(in.data(), viaMpi.data(), static_cast<int>(count), MPI_INT64_T, MPI_SUM, mpiComm);
  STRATA_OK(strataAllReduce(din.data(), dStrata.data(), count, strataFloat64, strataMax, comm, nullptr));
  MPI_Allreduce(din.data(), dMpi.data(), static_cast<int>(count), MPI_DOUBLE, MPI_MAX, mpiComm);
  for (size_t i = 0; i < count; ++i) {
    EXPECT_OR_ABORT(viaStrata[i] == viaMpi[i], "%s: int64 sum [%zu] strata %lld, MPI %lld", what, i,
                    static_cast<long long>(viaStrata[i]), static_cast<long long>(viaMpi[i]));
    EXPECT_OR_ABORT(dStrata[i] == dMpi[i], "%s: double max [%zu] strata %g, MPI %g", what, i, dStrata[i], dMpi[i]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int worldSize;
  MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
  MPI_Comm_size(MPI_COMM_WORLD, &worldSize);

  // Argument errors, found before any communication.
  strataComm_t comm = nullptr;
  EXPECT_OR_ABORT(strataCommInitFromMPI(MPI_COMM_NULL, &comm) == strataInvalidArgument, "MPI_COMM_NULL");
  EXPECT_OR_ABORT(strataCommInitFromMPI(MPI_COMM_WORLD, nullptr) == strataInvalidArgument, "NULL comm pointer");

  // The world.
  STRATA_OK(strataCommInitFromMPI(MPI_COMM_WORLD, &comm));
  CheckAgainstMpi(MPI_COMM_WORLD, comm, "world");

  // A split: even and odd world ranks, keys reversed so that strata's ranks must follow the MPI
  // communicator's order rather than the world's. Both halves make their ids at the same time.
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, worldRank % 2, -worldRank, &half);
  strataComm_t halfComm = nullptr;
  STRATA_OK(strataCommInitFromMPI(half, &halfComm));
  CheckAgainstMpi(half, halfComm, "split");

  // A dup, through the config variant, over TCP only.
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.shmDisable = 1;
  config.timeoutMs = 60000;
  strataComm_t tcpComm = nullptr;
  STRATA_OK(strataCommInitFromMPIConfig(dup, &tcpComm, &config));
  CheckAgainstMpi(dup, tcpComm, "dup over TCP");

  // One rank alone.
  strataComm_t selfComm = nullptr;
  STRATA_OK(strataCommInitFromMPI(MPI_COMM_SELF, &selfComm));
  CheckAgainstMpi(MPI_COMM_SELF, selfComm, "self");

  // The world communicator still works after the others were made.
  CheckAgainstMpi(MPI_COMM_WORLD, comm, "world again");

  STRATA_OK(strataCommDestroy(selfComm));
  STRATA_OK(strataCommDestroy(tcpComm));
  STRATA_OK(strataCommDestroy(halfComm));
  STRATA_OK(strataCommDestroy(comm));
  MPI_Comm_free(&dup);
  MPI_Comm_free(&half);
  if (worldRank == 0) printf("mpi_comm_test: %d ranks ok\n", worldSize);
  MPI_Finalize();
  return 0;
}
