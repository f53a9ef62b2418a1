// Every strata call in the perf tools goes through PERF_STRATA_CHECK: on an error it prints where and why,
// aborts the communicator so the other ranks fail fast instead of waiting out their timeout, and exits 1.
#pragma once

#include "strata/strata.h"

namespace strata::perf {

[[noreturn]] void FailStrataCall(strataResult_t result, strataComm_t comm, const char* file, int line);

}  // namespace strata::perf

#define PERF_STRATA_CHECK(comm, call)                                           \
  do {                                                                          \
    const strataResult_t perf_result_ = (call);                                 \
    if (perf_result_ != strataSuccess) {                                        \
      ::strata::perf::FailStrataCall(perf_result_, (comm), __FILE__, __LINE__); \
    }                                                                           \
  } while (0)
