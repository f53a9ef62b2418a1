// Runs a test body whose outcome depends on the machine's timing (busy-waits measured against budgets, the CPU time
// of a system call) up to `attempts` times: the failures of all but the last attempt are dropped, so the test fails
// only where every attempt did.
#pragma once

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <functional>

namespace strata {

inline void WithRetries(const std::function<void()>& body, int attempts = 3) {
  for (int i = 1; i < attempts; ++i) {
    testing::TestPartResultArray failures;
    {
      testing::ScopedFakeTestPartResultReporter capture(
          testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
      body();
    }
    if (failures.size() == 0) return;
  }
  body();
}

}  // namespace strata
