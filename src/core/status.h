// Status: the return type of every fallible internal function, and the CHECK macros that carry a
// file:line trail up to the API layer, where it becomes a strataResult_t and strataGetLastError().
#pragma once

#include <string>
#include <utility>

#include "strata/strata.h"

namespace strata {

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(strataResult_t code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return Status(); }

  bool ok() const { return code_ == strataSuccess; }
  strataResult_t code() const { return code_; }
  const std::string& message() const { return message_; }
  // Adds one breadcrumb ("at file:line") so the debug log shows how an error travelled.
  Status& addTrail(const char* file, int line);

 private:
  strataResult_t code_ = strataSuccess;
  std::string message_;
};

// Builds an error with a printf-style message.
Status MakeError(strataResult_t code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
// Same, with ": strerror(err)" appended.
Status MakeSysError(int err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace strata

#define STRATA_CHECK(expr)                                    \
  do {                                                        \
    ::strata::Status strata_status_ = (expr);                 \
    if (!strata_status_.ok()) {                               \
      strata_status_.addTrail(__FILE__, __LINE__);            \
      return strata_status_;                                  \
    }                                                         \
  } while (0)

// Returns an error from the enclosing function when `cond` is false.
#define STRATA_REQUIRE(cond, code, ...)                       \
  do {                                                        \
    if (!(cond)) return ::strata::MakeError((code), __VA_ARGS__); \
  } while (0)
