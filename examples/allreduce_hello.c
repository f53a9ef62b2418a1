/* The smallest strata program: every rank contributes its rank number, and every rank checks the
 * sum. Run it with any launcher, e.g. `build/bin/stratarun -n 4 build/bin/allreduce_hello`. */
#include <stdio.h>
#include <strata/strata.h>

int main(void) {
  strataComm_t comm;
  if (strataCommInitFromEnv(&comm, NULL) != strataSuccess) {
    fprintf(stderr, "strata init failed: %s\n", strataGetLastError(NULL));
    return 1;
  }
  int rank, nranks;
  strataCommUserRank(comm, &rank);
  strataCommCount(comm, &nranks);

  float value[2] = {(float)rank, 1.0f}, sum[2];
  strataResult_t rc = strataAllReduce(value, sum, 2, strataFloat32, strataSum, comm, NULL);
  if (rc != strataSuccess) {
    fprintf(stderr, "rank %d: allreduce failed: %s (%s)\n", rank, strataGetErrorString(rc), strataGetLastError(comm));
    return 1;
  }
  const float expected = (float)(nranks * (nranks - 1) / 2);
  int ok = sum[0] == expected && sum[1] == (float)nranks;
  if (rank == 0) printf("allreduce over %d ranks: %g (expected %g) %s\n", nranks, sum[0], expected, ok ? "ok" : "WRONG");
  strataCommDestroy(comm);
  return ok ? 0 : 1;
}
