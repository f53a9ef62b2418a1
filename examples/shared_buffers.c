/* Buffers from strataMemAlloc: the ranks of one host map each other's, and the in-place algorithms load and store
 * them directly. Every rank sums 8 MiB in place, checks every element, and rank 0 prints the algorithm that ran.
 * Run it with `build/bin/stratarun -n 2 build/bin/shared_buffers`. */
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

  const size_t count = (size_t)2 << 20; /* 8 MiB of floats */
  float* buf = NULL;
  if (strataMemAlloc((void**)&buf, count * sizeof(float)) != strataSuccess) {
    fprintf(stderr, "rank %d: strataMemAlloc failed: %s\n", rank, strataGetLastError(NULL));
    return 1;
  }
  for (size_t i = 0; i < count; ++i) buf[i] = (float)(rank + (int)(i % 7));
  strataResult_t rc = strataAllReduce(buf, buf, count, strataFloat32, strataSum, comm, NULL);
  if (rc != strataSuccess) {
    fprintf(stderr, "rank %d: allreduce failed: %s (%s)\n", rank, strataGetErrorString(rc), strataGetLastError(comm));
    return 1;
  }
  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i)
    wrong += buf[i] != (float)(nranks * (nranks - 1) / 2 + nranks * (int)(i % 7));
  const char* algo = "";
  strataCommGetLastAlgorithm(comm, &algo);
  if (rank == 0)
    printf("in-place allreduce of 8 MiB on shared buffers over %d ranks: %s, %zu wrong\n", nranks, algo, wrong);
  strataMemFree(buf);
  strataCommDestroy(comm);
  return wrong == 0 ? 0 : 1;
}
