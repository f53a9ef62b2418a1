// This process's id, current in a child after fork: what a process that inherited the state of another (open files,
// shared mappings, a communicator) compares with the id it recorded.
#pragma once

namespace strata {

// getpid() once, then kept current by a fork handler (pthread_atfork): a load per call, not a system call. A raw
// clone that skips the C library's fork handlers is not seen.
int ThisProcess();

}  // namespace strata
