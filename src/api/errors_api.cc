// Result strings, the per-thread last error, and the version.
#include <string>

#include "api/comm_handle.h"
#include "core/log.h"

namespace strata {
namespace {
thread_local std::string tls_lastError;
}

strataResult_t ReturnStatus(const Status& st) {
  if (st.ok()) return strataSuccess;
  tls_lastError = st.message();
  STRATA_LOG(INFO, ALL, "returning %s: %s", strataGetErrorString(st.code()), st.message().c_str());
  return st.code();
}

}  // namespace strata

extern "C" {

const char* strataGetErrorString(strataResult_t result) {
  switch (result) {
    case strataSuccess: return "no error";
    case strataUnhandledCudaError: return "unhandled cuda error";
    case strataSystemError: return "unhandled system error (a system call failed)";
    case strataInternalError: return "internal error";
    case strataInvalidArgument: return "invalid argument";
    case strataInvalidUsage: return "invalid usage";
    case strataRemoteError: return "remote process exited or there was a network error";
    case strataInProgress: return "operation in progress";
    case strataTimeout: return "timed out waiting for a peer";
    case strataCommAborted: return "communicator aborted";
    default: return "unknown result code";
  }
}

const char* strataGetLastError(strataComm_t comm) {
  (void)comm;  // the reason is kept per thread, whichever communicator failed
  return strata::tls_lastError.c_str();
}

strataResult_t strataGetVersion(int* version) {
  if (!version) return strata::ReturnStatus(strata::MakeError(strataInvalidArgument, "version pointer is NULL"));
  *version = STRATA_VERSION;
  return strataSuccess;
}

}  // extern "C"
