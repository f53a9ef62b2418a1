// The strata backend of torch.distributed: CPU tensors, one strata communicator per process group,
// collectives run in issue order on one worker thread and returned as StrataWork.
#pragma once

#include <strata/strata.h>

#include <chrono>
#include <memory>
#include <string>

#include "strata_work.h"
#include "torch_compat.h"

namespace strata_torch {

// What a user can set per process group (strata_torch.Options in Python). Each field left at its
// default keeps the library's own setting (its environment variable, else its default); the timeout
// is the process group's. Settings the library reads itself at init, such as STRATA_QUANT once it
// exists, reach every communicator through the environment; fields added to strataConfig_t get a
// field here and a line in MakeConfig.
struct BackendOptions {
  int nChannels = STRATA_CONFIG_UNDEF_INT;
  int shmDisable = STRATA_CONFIG_UNDEF_INT;
  int nSocketsPerPeer = STRATA_CONFIG_UNDEF_INT;
  std::string commName;
  std::string quant;  // strataConfig_t.quant: a quantization spec; empty keeps STRATA_QUANT
  // Added to the nice value of the thread that makes the group, for the group's worker thread; undefined
  // keeps STRATA_TORCH_WORKER_NICE, else -10 (docs/INTEGRATIONS.md).
  int workerNice = STRATA_CONFIG_UNDEF_INT;
};

class ProcessGroupStrata : public BackendBase {
 public:
  // Collective: rank 0 makes a strata unique id and publishes it in `store`; every rank reads it and
  // joins. Throws (a Python RuntimeError) when the communicator cannot be made.
  ProcessGroupStrata(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                     std::chrono::milliseconds timeout, const BackendOptions& options);
  ~ProcessGroupStrata() override;

  const std::string getBackendName() const override { return "strata"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplitSizes,
                                               std::vector<int64_t>& inputSplitSizes,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;

 private:
  // Queues `job` (which calls strata and throws on failure) and returns the work that completes with it.
  c10::intrusive_ptr<c10d::Work> enqueue(c10d::OpType type, const char* profilingTitle,
                                         const std::vector<at::Tensor>& inputs, std::vector<at::Tensor> outputs,
                                         std::function<void()> job);

  strataComm_t comm_ = nullptr;
  // Declared last: destroyed first, so the queued jobs finish while the communicator still exists.
  std::unique_ptr<WorkQueue> queue_;
};

}  // namespace strata_torch
