// Python.h first, as Python asks: the destructor must not hold the GIL while it joins the worker.
#include <Python.h>

#include "strata_work.h"

#include <ATen/core/jit_type.h>

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <future>
#include <set>

namespace strata_torch {

StrataWork::StrataWork(int rank, c10d::OpType type, const char* profilingTitle, const std::vector<at::Tensor>& inputs,
                       std::vector<at::Tensor> outputs)
    : c10d::Work(rank, type, profilingTitle, inputs),
      outputs_(std::move(outputs)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

void StrataWork::complete(std::exception_ptr error) {
  finish(error);
  if (error)
    future_->setError(error);
  else
    future_->markCompleted(c10::IValue(outputs_));
}

namespace {
// Every live queue, for DrainAll.
std::mutex registryMutex;
std::set<WorkQueue*>& Registry() {
  static auto* queues = new std::set<WorkQueue*>;  // never destroyed: queues may outlive static destructors
  return *queues;
}

// Linux keeps a nice value per thread: PRIO_PROCESS with 0 is the calling thread, which inherited its
// creator's value.
int ShiftOwnNice(int offset) {
  if (offset == 0) return 0;
  errno = 0;
  const int current = getpriority(PRIO_PROCESS, 0);
  if (current == -1 && errno != 0) return errno;
  return setpriority(PRIO_PROCESS, 0, std::clamp(current + offset, -20, 19)) == 0 ? 0 : errno;
}
}  // namespace

WorkQueue::WorkQueue(int niceOffset) {
  std::promise<int> tried;
  std::future<int> result = tried.get_future();
  thread_ = std::thread([this, niceOffset, tried = std::move(tried)]() mutable {
    tried.set_value(ShiftOwnNice(niceOffset));
    loop();
  });
  priorityError_ = result.get();
  std::lock_guard<std::mutex> lock(registryMutex);
  Registry().insert(this);
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard<std::mutex> lock(registryMutex);
    Registry().erase(this);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_one();
  // A queued job may complete a future whose Python callbacks (fut.then) take the GIL on the worker
  // thread: join without holding it.
  if (Py_IsInitialized() && PyGILState_Check()) {
    Py_BEGIN_ALLOW_THREADS thread_.join();
    Py_END_ALLOW_THREADS
  } else {
    thread_.join();
  }
}

void WorkQueue::push(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void WorkQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [this] { return jobs_.empty() && !running_; });
}

void WorkQueue::DrainAll() {
  // Under the registry lock: a queue cannot be destroyed while it is drained.
  std::lock_guard<std::mutex> lock(registryMutex);
  for (WorkQueue* queue : Registry()) queue->drain();
}

void WorkQueue::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and nothing left to run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    job();
    // Destroyed before the lock is taken again: the job holds tensors, and the last reference to a
    // tensor with a Python object takes the GIL, which a thread waiting for this lock may hold (the
    // destructor below, called from Python).
    job = nullptr;
    lock.lock();
    running_ = false;
    if (jobs_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace strata_torch
