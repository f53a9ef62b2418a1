#include "strata_call.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata::perf {

void FailStrataCall(strataResult_t result, strataComm_t comm, const char* file, int line) {
  const char* reason = strataGetLastError(comm);
  const char* slash = std::strrchr(file, '/');  // the build passes absolute paths; the name is enough
  if (slash) file = slash + 1;
  std::fprintf(stderr, "strata error at %s:%d: %s : %s\n", file, line, strataGetErrorString(result),
               reason ? reason : "");
  std::fflush(stderr);
  std::fflush(stdout);
  if (comm) (void)strataCommAbort(comm);  // already failing; its own result adds nothing
  std::exit(1);
}

}  // namespace strata::perf
