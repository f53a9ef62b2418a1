// The one logger: STRATA_DEBUG=WARN|INFO|TRACE, STRATA_DEBUG_SUBSYS=INIT,COLL,NET,SHM,... (or ALL),
// STRATA_DEBUG_FILE=path (%h host, %p pid). Every line carries host, pid and the rank of the communicator
// the calling thread is working for.
#pragma once

#include <cstdint>

namespace strata {

enum class LogLevel { NONE = 0, WARN = 1, INFO = 2, TRACE = 3 };

enum LogSubsys : uint32_t {
  INIT = 1u << 0,
  COLL = 1u << 1,
  NET = 1u << 2,
  SHM = 1u << 3,
  BOOT = 1u << 4,
  ENV = 1u << 5,
  TUNING = 1u << 6,
  ALL = 0xffffffffu,
};

bool LogEnabled(LogLevel level, uint32_t subsys);
void LogWrite(LogLevel level, uint32_t subsys, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
// Sets the "rank r/n" tag of this thread's log lines (-1 clears it).
void LogSetRank(int rank, int nranks);

}  // namespace strata

#define STRATA_LOG(level, subsys, ...)                                                  \
  do {                                                                                  \
    if (::strata::LogEnabled(::strata::LogLevel::level, ::strata::subsys))              \
      ::strata::LogWrite(::strata::LogLevel::level, ::strata::subsys, __VA_ARGS__);     \
  } while (0)
