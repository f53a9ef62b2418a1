/*
 * strata from MPI programs: a strata communicator over the ranks of an MPI communicator.
 *
 * Link with libstrata_mpi (CMake: strata::strata_mpi from find_package(strata COMPONENTS mpi);
 * pkg-config: strata-mpi). Every rank of `mpiComm` must call it, as with any MPI collective: rank 0
 * of `mpiComm` makes a unique id (strataGetUniqueId) and MPI_Bcast's it over `mpiComm`, then every
 * rank joins with strataCommInitRankConfig. Any communicator works: MPI_COMM_WORLD, a dup, a split
 * (each part gets its own strata communicator), MPI_COMM_SELF. Strata's rank i is rank i of `mpiComm`.
 */
#ifndef STRATA_STRATA_MPI_H_
#define STRATA_STRATA_MPI_H_

#include <mpi.h>
#include <strata/strata.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Errors, besides those of strataGetUniqueId and strataCommInitRankConfig:
 *   strataInvalidArgument  `comm` is NULL, or `mpiComm` is MPI_COMM_NULL or an intercommunicator;
 *   strataInvalidUsage     MPI is not initialized, or already finalized;
 *   strataSystemError      an MPI call returned an error (only under MPI_ERRORS_RETURN);
 *   strataRemoteError      rank 0 of `mpiComm` could not make the unique id (every other rank gets this).
 * These four are found by this layer, which has no access to strataGetLastError(): the code alone
 * names the cause. Errors of the two strata calls keep their reason in strataGetLastError(NULL). */
strataResult_t strataCommInitFromMPI(MPI_Comm mpiComm, strataComm_t* comm);
/* The same with a config (STRATA_CONFIG_INITIALIZER, then set fields); NULL means defaults. */
strataResult_t strataCommInitFromMPIConfig(MPI_Comm mpiComm, strataComm_t* comm, strataConfig_t* config);

#ifdef __cplusplus
}
#endif

#endif /* STRATA_STRATA_MPI_H_ */
