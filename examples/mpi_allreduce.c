/* strata inside an MPI program: a strata communicator made from MPI_COMM_WORLD, one allreduce,
 * checked against MPI_Allreduce. Run it with `mpirun -np 4 build/bin/mpi_allreduce`. */
#include <mpi.h>
#include <stdio.h>
#include <strata/strata_mpi.h>

#define COUNT 1000

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);

  strataComm_t comm;
  strataResult_t rc = strataCommInitFromMPI(MPI_COMM_WORLD, &comm);
  if (rc != strataSuccess) {
    fprintf(stderr, "rank %d: strataCommInitFromMPI: %s (%s)\n", rank, strataGetErrorString(rc), strataGetLastError(NULL));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }

  static float x[COUNT], viaStrata[COUNT], viaMpi[COUNT];
  for (int i = 0; i < COUNT; ++i) x[i] = (float)(rank + 1) * (float)(i % 7);
  rc = strataAllReduce(x, viaStrata, COUNT, strataFloat32, strataSum, comm, NULL);
  if (rc != strataSuccess) {
    fprintf(stderr, "rank %d: strataAllReduce: %s (%s)\n", rank, strataGetErrorString(rc), strataGetLastError(comm));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Allreduce(x, viaMpi, COUNT, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

  /* Small integers in float: both sums are exact, whatever the order of additions. */
  int wrong = 0, wrongAll = 0;
  for (int i = 0; i < COUNT; ++i) wrong += viaStrata[i] != viaMpi[i];
  MPI_Allreduce(&wrong, &wrongAll, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  int nranks;
  strataCommCount(comm, &nranks);
  if (rank == 0) printf("strata allreduce over %d MPI ranks: %d wrong of %d\n", nranks, wrongAll, COUNT);

  strataCommDestroy(comm);
  MPI_Finalize();
  return wrongAll == 0 ? 0 : 1;
}
