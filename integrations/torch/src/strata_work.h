// Asynchronous work: each collective is a job on the process group's one worker thread, run in the
// order it was issued (every rank issues the same order, as strata requires), and a StrataWork that
// completes when the job is done, with a Future for DDP communication hooks.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <ATen/core/ivalue.h>

#include "torch_compat.h"

namespace strata_torch {

class StrataWork : public c10d::Work {
 public:
  // `outputs` are what result() and the future give: the tensors the collective wrote.
  StrataWork(int rank, c10d::OpType type, const char* profilingTitle, const std::vector<at::Tensor>& inputs,
             std::vector<at::Tensor> outputs);

  std::vector<at::Tensor> result() override { return outputs_; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

  // Called once, on the worker thread: completes the work (wakes wait(), ends the profiler range),
  // then the future (which runs its callbacks on this thread).
  void complete(std::exception_ptr error);

 private:
  std::vector<at::Tensor> outputs_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

// One thread that runs jobs in the order they were pushed. The destructor runs what is queued, then joins.
class WorkQueue {
 public:
  // The worker's nice value is the creating thread's plus `niceOffset` (clamped to -20..19; negative
  // raises its priority). The constructor returns once the worker has tried; priorityError() is then
  // 0, or the errno that refused it (EACCES/EPERM without CAP_SYS_NICE or a high enough RLIMIT_NICE),
  // in which case the worker keeps the creator's priority.
  explicit WorkQueue(int niceOffset = 0);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void push(std::function<void()> job);
  // Returns when every job pushed so far has run.
  void drain();
  // drain() on every queue of the process. Python calls it at exit (atexit), while the worker threads
  // can still take the GIL for future callbacks; once the interpreter finalizes, a thread that asks
  // for the GIL is made to exit, in the middle of our job.
  static void DrainAll();

  int priorityError() const { return priorityError_; }

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable cv_;       // a job was pushed, or stopping
  std::condition_variable idle_cv_;  // the queue became empty with no job running
  std::deque<std::function<void()>> jobs_;
  bool running_ = false;
  bool stopping_ = false;
  int priorityError_ = 0;
  std::thread thread_;
};

}  // namespace strata_torch
