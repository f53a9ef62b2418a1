// strataCommInitFromMPI: rank 0 of the MPI communicator makes the unique id and broadcasts it (with
// its own result, so that a failure there is not a bootstrap timeout everywhere else).
#include "strata/strata_mpi.h"

#include <cstring>

namespace {

// What rank 0 broadcasts: its strataGetUniqueId result, then the id.
struct IdMessage {
  int32_t result;
  strataUniqueId id;
};

strataResult_t MpiCheck(int mpiResult) { return mpiResult == MPI_SUCCESS ? strataSuccess : strataSystemError; }

}  // namespace

extern "C" {

strataResult_t strataCommInitFromMPIConfig(MPI_Comm mpiComm, strataComm_t* comm, strataConfig_t* config) {
  if (comm == nullptr) return strataInvalidArgument;
  *comm = nullptr;
  int initialized = 0, finalized = 0;
  if (MPI_Initialized(&initialized) != MPI_SUCCESS || MPI_Finalized(&finalized) != MPI_SUCCESS) return strataSystemError;
  if (!initialized || finalized) return strataInvalidUsage;
  if (mpiComm == MPI_COMM_NULL) return strataInvalidArgument;
  int inter = 0, rank = 0, size = 0;
  strataResult_t rc = MpiCheck(MPI_Comm_test_inter(mpiComm, &inter));
  if (rc != strataSuccess) return rc;
  if (inter) return strataInvalidArgument;
  if ((rc = MpiCheck(MPI_Comm_rank(mpiComm, &rank))) != strataSuccess) return rc;
  if ((rc = MpiCheck(MPI_Comm_size(mpiComm, &size))) != strataSuccess) return rc;

  IdMessage msg;
  memset(&msg, 0, sizeof(msg));
  if (rank == 0) msg.result = strataGetUniqueId(&msg.id);
  if ((rc = MpiCheck(MPI_Bcast(&msg, sizeof(msg), MPI_BYTE, 0, mpiComm))) != strataSuccess) return rc;
  if (msg.result != strataSuccess) return rank == 0 ? static_cast<strataResult_t>(msg.result) : strataRemoteError;
  return strataCommInitRankConfig(comm, size, msg.id, rank, config);
}

strataResult_t strataCommInitFromMPI(MPI_Comm mpiComm, strataComm_t* comm) {
  return strataCommInitFromMPIConfig(mpiComm, comm, nullptr);
}

}  // extern "C"
