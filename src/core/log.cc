#include "core/log.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "core/config.h"

namespace strata {

namespace {

struct LoggerState {
  LogLevel level = LogLevel::WARN;
  uint32_t mask = ALL;
  FILE* out = stderr;
  char host[64] = {0};
  std::mutex mu;
};

uint32_t ParseSubsys(const std::string& spec) {
  if (spec.empty() || spec == "ALL") return ALL;
  static const struct {
    const char* name;
    uint32_t bit;
  } kNames[] = {{"INIT", INIT}, {"COLL", COLL}, {"NET", NET},   {"SHM", SHM},
                {"BOOT", BOOT}, {"ENV", ENV},   {"TUNING", TUNING}, {"ALL", ALL}};
  uint32_t mask = 0;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    std::string word = spec.substr(pos, end - pos);
    for (const auto& n : kNames)
      if (word == n.name) mask |= n.bit;
    pos = end + 1;
  }
  return mask ? mask : ALL;
}

std::string ExpandPath(const std::string& pattern, const char* host) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[++i];
      if (c == 'h') out += host;
      else if (c == 'p') out += std::to_string(getpid());
      else out += c;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

LoggerState& State() {
  static LoggerState* state = [] {
    auto* s = new LoggerState;
    gethostname(s->host, sizeof(s->host) - 1);
    const std::string level = ConfigString("STRATA_DEBUG");
    if (level == "NONE" || level == "OFF") s->level = LogLevel::NONE;
    else if (level == "INFO") s->level = LogLevel::INFO;
    else if (level == "TRACE") s->level = LogLevel::TRACE;
    s->mask = ParseSubsys(ConfigString("STRATA_DEBUG_SUBSYS"));
    const std::string file = ConfigString("STRATA_DEBUG_FILE");
    if (!file.empty()) {
      FILE* f = fopen(ExpandPath(file, s->host).c_str(), "a");
      if (f) s->out = f;
    }
    return s;
  }();
  return *state;
}

thread_local int tls_rank = -1;
thread_local int tls_nranks = 0;

}  // namespace

bool LogEnabled(LogLevel level, uint32_t subsys) {
  LoggerState& s = State();
  return level <= s.level && (subsys & s.mask) != 0;
}

void LogSetRank(int rank, int nranks) {
  tls_rank = rank;
  tls_nranks = nranks;
}

void LogWrite(LogLevel level, uint32_t subsys, const char* fmt, ...) {
  (void)subsys;
  LoggerState& s = State();
  static const char* kLevel[] = {"", "WARN", "INFO", "TRACE"};
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  char rank[32] = "";
  if (tls_rank >= 0) snprintf(rank, sizeof(rank), " rank %d/%d", tls_rank, tls_nranks);
  std::lock_guard<std::mutex> lock(s.mu);
  fprintf(s.out, "%s:%d%s strata %s %s\n", s.host, static_cast<int>(getpid()), rank, kLevel[static_cast<int>(level)],
          msg);
  fflush(s.out);
}

}  // namespace strata
