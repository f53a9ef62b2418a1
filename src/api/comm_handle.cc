#include "api/comm_handle.h"

#include <mutex>
#include <thread>
#include <unordered_set>

#include "core/log.h"
#include "core/process.h"

namespace strata {

namespace {
std::mutex g_mu;
std::unordered_set<strataComm*>& Registry() {
  static auto* r = new std::unordered_set<strataComm*>;
  return *r;
}
bool Known(strataComm* c) {
  std::lock_guard<std::mutex> lock(g_mu);
  return Registry().count(c) != 0;
}

Status RefuseInChild(const strataComm* comm, const char* what) {
  const int me = ThisProcess();
  STRATA_REQUIRE(comm->creator == me, strataInvalidUsage,
                 "%sthe communicator was made by process %d, and this process (%d) was forked from it; a child "
                 "shares its parent's connections and cannot use or end them: make a communicator of its own",
                 what, comm->creator, me);
  return Status::Ok();
}
}  // namespace

strataComm* NewCommHandle(std::unique_ptr<Communicator> impl) {
  auto* c = new strataComm;
  c->impl = std::move(impl);
  c->creator = ThisProcess();
  std::lock_guard<std::mutex> lock(g_mu);
  Registry().insert(c);
  return c;
}

CommGuard::CommGuard(strataComm* comm, Use use) {
  if (comm == nullptr) {
    status_ = MakeError(strataInvalidArgument, "communicator is NULL");
    return;
  }
  if (!Known(comm)) {
    status_ = MakeError(strataInvalidArgument, "communicator %p is not one strata created", static_cast<void*>(comm));
    return;
  }
  comm->activeCalls.fetch_add(1);
  entered_ = true;
  comm_ = comm;
  switch (comm->state.load()) {
    case strataComm::kLive:
      if (use == kMovesData) {
        status_ = RefuseInChild(comm, "");
        if (!status_.ok()) return;
        moving_ = !comm->moving.exchange(true);
        if (!moving_)
          status_ = MakeError(strataInvalidUsage,
                              "another thread is in a call on this communicator: a communicator runs one call at a "
                              "time; order the threads' calls (the same order on every rank) or give each thread a "
                              "communicator of its own (strataCommSplit)");
      }
      return;
    case strataComm::kAborted:
    case strataComm::kClosing:
      status_ = MakeError(strataCommAborted, "communicator was aborted or is being destroyed");
      return;
    default: status_ = MakeError(strataInvalidUsage, "communicator was destroyed");
  }
}

CommGuard::~CommGuard() {
  if (moving_) comm_->moving.store(false);
  if (entered_) comm_->activeCalls.fetch_sub(1);
}

Status CloseComm(strataComm* comm, bool abort) {
  STRATA_REQUIRE(comm != nullptr, strataInvalidArgument, "communicator is NULL");
  STRATA_REQUIRE(Known(comm), strataInvalidArgument, "communicator %p is not one strata created",
                 static_cast<void*>(comm));
  STRATA_CHECK(RefuseInChild(comm, abort ? "strataCommAbort: " : "strataCommDestroy: "));
  int expected = strataComm::kLive;
  if (!comm->state.compare_exchange_strong(expected, strataComm::kClosing)) {
    if (abort && expected == strataComm::kAborted) return Status::Ok();  // aborting twice is harmless
    if (expected == strataComm::kDestroyed) return MakeError(strataInvalidUsage, "communicator was destroyed");
    return MakeError(strataCommAborted, "communicator was aborted or is being destroyed");
  }
  if (abort) comm->impl->abort();
  // Calls in flight see the abort flag (or finish) and leave.
  while (comm->activeCalls.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  comm->impl.reset();
  comm->state.store(abort ? strataComm::kAborted : strataComm::kDestroyed);
  return Status::Ok();
}

}  // namespace strata
