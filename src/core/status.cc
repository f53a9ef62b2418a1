#include "core/status.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

#include "core/log.h"

namespace strata {

namespace {
std::string FormatV(const char* fmt, va_list ap) {
  char buf[1024];
  vsnprintf(buf, sizeof(buf), fmt, ap);
  return buf;
}
}  // namespace

Status& Status::addTrail(const char* file, int line) {
  const char* base = strrchr(file, '/');
  STRATA_LOG(TRACE, ALL, "  at %s:%d (%s)", base ? base + 1 : file, line, message_.c_str());
  return *this;
}

Status MakeError(strataResult_t code, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = FormatV(fmt, ap);
  va_end(ap);
  return Status(code, std::move(msg));
}

Status MakeSysError(int err, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::string msg = FormatV(fmt, ap);
  va_end(ap);
  msg += ": ";
  msg += strerror(err);
  return Status(strataSystemError, std::move(msg));
}

}  // namespace strata
