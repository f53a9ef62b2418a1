/* Links against an installed strata and runs a one-rank allreduce through the public header only. */
#include <stdio.h>
#include <strata/strata.h>

int main(void) {
  int version = 0;
  if (strataGetVersion(&version) != strataSuccess || version != STRATA_VERSION) return 1;
  strataUniqueId id;
  strataComm_t comm;
  if (strataGetUniqueId(&id) != strataSuccess || strataCommInitRank(&comm, 1, id, 0) != strataSuccess) {
    fprintf(stderr, "init failed: %s\n", strataGetLastError(NULL));
    return 1;
  }
  float in[3] = {1.5f, -2.0f, 4.0f}, out[3] = {0};
  if (strataAllReduce(in, out, 3, strataFloat32, strataSum, comm, NULL) != strataSuccess) return 1;
  strataCommDestroy(comm);
  for (int i = 0; i < 3; ++i)
    if (out[i] != in[i]) return 1;
  printf("consumer ok (strata %d)\n", version);
  return 0;
}
