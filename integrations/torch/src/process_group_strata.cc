#include "process_group_strata.h"

#include <cxxabi.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <numeric>

#include "tensor_types.h"

namespace strata_torch {
namespace {

constexpr const char* kUniqueIdKey = "strata_unique_id";
constexpr const char* kUniqueIdErrorPrefix = "error: ";

// Throws a c10::Error that names the collective, strata's code and its reason.
void Check(strataResult_t rc, const char* collective, strataComm_t comm) {
  TORCH_CHECK(rc == strataSuccess, "strata ", collective, " failed: ", strataGetErrorString(rc), ": ",
              strataGetLastError(comm));
}

size_t Count(const at::Tensor& t) { return static_cast<size_t>(t.numel()); }

// Runs `body` (which records strataSend/strataRecv calls) as one strata group; the group is always
// closed, and the first failure is thrown.
template <typename Body>
void RunGroup(const char* collective, strataComm_t comm, Body body) {
  Check(strataGroupStart(), collective, comm);
  strataResult_t first = strataSuccess;
  body([&first](strataResult_t rc) {
    if (first == strataSuccess) first = rc;
  });
  const strataResult_t end = strataGroupEnd();
  Check(first != strataSuccess ? first : end, collective, comm);
}

void CheckRank(int64_t rank, int size, const char* what, const char* collective) {
  TORCH_CHECK(rank >= 0 && rank < size, "strata ", collective, ": ", what, " ", rank, " is out of range for ", size,
              " ranks");
}

// A flat copy of `tensors` (same dtype), one after the other.
at::Tensor Flatten(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> flat;
  flat.reserve(tensors.size());
  for (const at::Tensor& t : tensors) flat.push_back(t.reshape({-1}));
  return at::cat(flat);
}

// Copies consecutive pieces of `flat` into `tensors`.
void Unflatten(const at::Tensor& flat, const std::vector<at::Tensor>& tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) {
    t.view({-1}).copy_(flat.narrow(0, offset, t.numel()));
    offset += t.numel();
  }
}

// Elements per row along dim 0, and the row offsets of each rank's block (from split sizes, or equal
// blocks when the list is empty).
std::vector<size_t> SplitOffsets(const at::Tensor& t, const std::vector<int64_t>& splits, int size,
                                 const char* which, std::vector<size_t>* counts) {
  TORCH_CHECK(t.dim() >= 1, "strata alltoall_base: ", which, " needs at least one dimension to split");
  const int64_t rows = t.size(0);
  std::vector<int64_t> rowsPer(splits);
  if (rowsPer.empty()) {
    TORCH_CHECK(rows % size == 0, "strata alltoall_base: ", which, " has ", rows,
                " rows, not divisible by the group size ", size, " (give split sizes)");
    rowsPer.assign(size, rows / size);
  }
  TORCH_CHECK(static_cast<int>(rowsPer.size()) == size, "strata alltoall_base: ", rowsPer.size(), " ", which,
              " split sizes for ", size, " ranks");
  TORCH_CHECK(std::all_of(rowsPer.begin(), rowsPer.end(), [](int64_t r) { return r >= 0; }),
              "strata alltoall_base: negative ", which, " split size");
  TORCH_CHECK(std::accumulate(rowsPer.begin(), rowsPer.end(), int64_t{0}) == rows, "strata alltoall_base: ", which,
              " split sizes add up to ", std::accumulate(rowsPer.begin(), rowsPer.end(), int64_t{0}), ", not ", rows,
              " rows");
  const size_t rowElems = rows == 0 ? 0 : Count(t) / static_cast<size_t>(rows);
  std::vector<size_t> offsets(size);
  counts->assign(size, 0);
  size_t offset = 0;
  for (int p = 0; p < size; ++p) {
    offsets[p] = offset;
    (*counts)[p] = static_cast<size_t>(rowsPer[p]) * rowElems;
    offset += (*counts)[p];
  }
  return offsets;
}

constexpr int kDefaultWorkerNice = -10;
constexpr int kWorkerNiceLimit = 39;  // nice values run from -20 to 19

// The worker's nice offset: the option, else STRATA_TORCH_WORKER_NICE, else the default. *explicitly
// says whether the user asked for it (a refused request is then worth a warning).
int WorkerNice(int option, bool* explicitly) {
  *explicitly = true;
  if (option != STRATA_CONFIG_UNDEF_INT) {
    TORCH_CHECK(option >= -kWorkerNiceLimit && option <= kWorkerNiceLimit, "strata: worker_nice must be from ",
                -kWorkerNiceLimit, " to ", kWorkerNiceLimit, ", got ", option);
    return option;
  }
  const char* text = getenv("STRATA_TORCH_WORKER_NICE");
  if (text == nullptr || text[0] == '\0') {
    *explicitly = false;
    return kDefaultWorkerNice;
  }
  char* end = nullptr;
  errno = 0;
  const long value = strtol(text, &end, 10);
  if (end != text && *end == '\0' && errno == 0 && value >= -kWorkerNiceLimit && value <= kWorkerNiceLimit)
    return static_cast<int>(value);
  TORCH_WARN("strata: STRATA_TORCH_WORKER_NICE=", text, " is not an integer from ", -kWorkerNiceLimit, " to ",
             kWorkerNiceLimit, "; using the default ", kDefaultWorkerNice);
  *explicitly = false;
  return kDefaultWorkerNice;
}

}  // namespace

ProcessGroupStrata::ProcessGroupStrata(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                       std::chrono::milliseconds timeout, const BackendOptions& options)
    : BackendBase(rank, size) {
  bool niceAsked = false;
  const int nice = WorkerNice(options.workerNice, &niceAsked);  // a bad option fails before any exchange
  // Rank 0 makes the id (and the bootstrap root, in this process) and publishes it in the store; the
  // others block in store->get until it is there. A failure is published too, so that no rank waits
  // for the store's timeout.
  strataUniqueId id;
  if (rank == 0) {
    const strataResult_t rc = strataGetUniqueId(&id);
    if (rc != strataSuccess) {
      const std::string reason = std::string(strataGetErrorString(rc)) + ": " + strataGetLastError(nullptr);
      const std::string message = kUniqueIdErrorPrefix + reason;
      store->set(kUniqueIdKey, std::vector<uint8_t>(message.begin(), message.end()));
      TORCH_CHECK(false, "strata: could not make a unique id: ", reason);
    }
    store->set(kUniqueIdKey, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
  } else {
    const std::vector<uint8_t> value = store->get(kUniqueIdKey);
    TORCH_CHECK(value.size() == sizeof(id.internal), "strata: rank 0 could not make the communicator: ",
                std::string(value.begin(), value.end()));
    memcpy(id.internal, value.data(), sizeof(id.internal));
  }

  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.timeoutMs = static_cast<int>(std::clamp<int64_t>(timeout.count(), 1, INT_MAX));
  config.nChannels = options.nChannels;
  config.shmDisable = options.shmDisable;
  config.nSocketsPerPeer = options.nSocketsPerPeer;
  if (!options.commName.empty()) config.commName = options.commName.c_str();
  if (!options.quant.empty()) config.quant = options.quant.c_str();
  Check(strataCommInitRankConfig(&comm_, size, id, rank, &config), "communicator init", nullptr);
  queue_ = std::make_unique<WorkQueue>(nice);
  if (queue_->priorityError() != 0 && niceAsked)
    TORCH_WARN("strata: the worker thread could not take nice offset ", nice, " (", strerror(queue_->priorityError()),
               "; raising a thread's priority needs root, CAP_SYS_NICE or RLIMIT_NICE): it runs at the priority "
               "of the thread that made the process group");
  init();  // torch's usage logging, as its own backends do
}

ProcessGroupStrata::~ProcessGroupStrata() {
  queue_.reset();  // runs what is still queued
  if (comm_ != nullptr) strataCommDestroy(comm_);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::enqueue(c10d::OpType type, const char* profilingTitle,
                                                           const std::vector<at::Tensor>& inputs,
                                                           std::vector<at::Tensor> outputs,
                                                           std::function<void()> job) {
  auto work = c10::make_intrusive<StrataWork>(rank_, type, profilingTitle, inputs, std::move(outputs));
  queue_->push([work, job = std::move(job)] {
    std::exception_ptr error;
    try {
      job();
    } catch (abi::__forced_unwind&) {
      throw;  // thread cancellation is not an error of the collective
    } catch (...) {
      error = std::current_exception();
    }
    work->complete(error);
  });
  return work;
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::broadcast(std::vector<at::Tensor>& tensors,
                                                             const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = SingleTensor(tensors, "broadcast");
  CheckRank(opts.rootRank, size_, "root", "broadcast");
  const strataDataType_t type = StrataType(t.scalar_type(), "broadcast");
  const int root = static_cast<int>(opts.rootRank);
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::BROADCAST, "strata:broadcast", tensors, tensors, [=] {
    Check(strataBroadcast(t.data_ptr(), t.data_ptr(), Count(t), type, root, comm, nullptr), "broadcast", comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::allreduce(std::vector<at::Tensor>& tensors,
                                                             const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = SingleTensor(tensors, "allreduce");
  const strataDataType_t type = StrataType(t.scalar_type(), "allreduce");
  const strataRedOp_t op = StrataOp(opts.reduceOp, t.scalar_type(), "allreduce");
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::ALLREDUCE, "strata:all_reduce", tensors, tensors, [=] {
    Check(strataAllReduce(t.data_ptr(), t.data_ptr(), Count(t), type, op, comm, nullptr), "allreduce", comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                       const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "strata allreduce_coalesced: no tensors");
  CheckTensor(tensors[0], "allreduce_coalesced");
  for (const at::Tensor& t : tensors) {
    CheckTensor(t, "allreduce_coalesced");
    TORCH_CHECK(t.scalar_type() == tensors[0].scalar_type(), "strata allreduce_coalesced: dtypes differ (",
                c10::toString(t.scalar_type()), " and ", c10::toString(tensors[0].scalar_type()), ")");
  }
  const strataDataType_t type = StrataType(tensors[0].scalar_type(), "allreduce_coalesced");
  const strataRedOp_t op = StrataOp(opts.reduceOp, tensors[0].scalar_type(), "allreduce_coalesced");
  strataComm_t comm = comm_;
  // One allreduce over a flat copy: one pass of latency for any number of tensors.
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, "strata:allreduce_coalesced", tensors, tensors, [=] {
    at::Tensor flat = Flatten(tensors);
    Check(strataAllReduce(flat.data_ptr(), flat.data_ptr(), Count(flat), type, op, comm, nullptr),
          "allreduce_coalesced", comm);
    Unflatten(flat, tensors);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::reduce(std::vector<at::Tensor>& tensors,
                                                          const c10d::ReduceOptions& opts) {
  const at::Tensor& t = SingleTensor(tensors, "reduce");
  CheckRank(opts.rootRank, size_, "root", "reduce");
  const strataDataType_t type = StrataType(t.scalar_type(), "reduce");
  const strataRedOp_t op = StrataOp(opts.reduceOp, t.scalar_type(), "reduce");
  const int root = static_cast<int>(opts.rootRank);
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::REDUCE, "strata:reduce", tensors, tensors, [=] {
    Check(strataReduce(t.data_ptr(), t.data_ptr(), Count(t), type, op, root, comm, nullptr), "reduce", comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                             std::vector<at::Tensor>& inputs,
                                                             const c10d::AllgatherOptions&) {
  const at::Tensor& in = SingleTensor(inputs, "allgather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "strata allgather: expected one list of ", size_, " output tensors");
  CheckSameShape(outputs[0], in, "allgather");
  const strataDataType_t type = StrataType(in.scalar_type(), "allgather");
  const std::vector<at::Tensor> outs = outputs[0];
  strataComm_t comm = comm_;
  const int size = size_;
  return enqueue(c10d::OpType::ALLGATHER, "strata:all_gather", inputs, outs, [=] {
    at::Tensor flat = at::empty({static_cast<int64_t>(size) * in.numel()}, in.options());
    Check(strataAllGather(in.data_ptr(), flat.data_ptr(), Count(in), type, comm, nullptr), "allgather", comm);
    Unflatten(flat, outs);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                   const c10d::AllgatherOptions&) {
  CheckTensor(input, "_allgather_base");
  CheckTensor(output, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "strata _allgather_base: dtypes differ");
  TORCH_CHECK(output.numel() == size_ * input.numel(), "strata _allgather_base: output has ", output.numel(),
              " elements, expected ", size_, " x ", input.numel());
  const strataDataType_t type = StrataType(input.scalar_type(), "_allgather_base");
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::_ALLGATHER_BASE, "strata:_all_gather_base", {input}, {output}, [=] {
    Check(strataAllGather(input.data_ptr(), output.data_ptr(), Count(input), type, comm, nullptr), "_allgather_base",
          comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::GatherOptions& opts) {
  const at::Tensor& in = SingleTensor(inputs, "gather");
  CheckRank(opts.rootRank, size_, "root", "gather");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "strata gather: the root expects one list of ", size_, " output tensors");
    CheckSameShape(outputs[0], in, "gather");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty(), "strata gather: only the root takes output tensors");
  }
  const strataDataType_t type = StrataType(in.scalar_type(), "gather");
  strataComm_t comm = comm_;
  const int rank = rank_;
  return enqueue(c10d::OpType::GATHER, "strata:gather", inputs, outs, [=] {
    RunGroup("gather", comm, [&](auto note) {
      note(strataSend(in.data_ptr(), Count(in), type, root, comm, nullptr));
      if (rank == root)
        for (int p = 0; p < static_cast<int>(outs.size()); ++p)
          note(strataRecv(outs[p].data_ptr(), Count(outs[p]), type, p, comm, nullptr));
    });
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::scatter(std::vector<at::Tensor>& outputs,
                                                           std::vector<std::vector<at::Tensor>>& inputs,
                                                           const c10d::ScatterOptions& opts) {
  const at::Tensor& out = SingleTensor(outputs, "scatter");
  CheckRank(opts.rootRank, size_, "root", "scatter");
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "strata scatter: the root expects one list of ", size_, " input tensors");
    CheckSameShape(inputs[0], out, "scatter");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty(), "strata scatter: only the root takes input tensors");
  }
  const strataDataType_t type = StrataType(out.scalar_type(), "scatter");
  strataComm_t comm = comm_;
  const int rank = rank_;
  return enqueue(c10d::OpType::SCATTER, "strata:scatter", ins, outputs, [=] {
    RunGroup("scatter", comm, [&](auto note) {
      if (rank == root)
        for (int p = 0; p < static_cast<int>(ins.size()); ++p)
          note(strataSend(ins[p].data_ptr(), Count(ins[p]), type, p, comm, nullptr));
      note(strataRecv(out.data_ptr(), Count(out), type, root, comm, nullptr));
    });
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                  std::vector<std::vector<at::Tensor>>& inputs,
                                                                  const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = SingleTensor(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "strata reduce_scatter: expected one list of ", size_, " input tensors");
  CheckSameShape(inputs[0], out, "reduce_scatter");
  const strataDataType_t type = StrataType(out.scalar_type(), "reduce_scatter");
  const strataRedOp_t op = StrataOp(opts.reduceOp, out.scalar_type(), "reduce_scatter");
  const std::vector<at::Tensor> ins = inputs[0];
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::REDUCE_SCATTER, "strata:reduce_scatter", ins, outputs, [=] {
    at::Tensor flat = Flatten(ins);
    Check(strataReduceScatter(flat.data_ptr(), out.data_ptr(), Count(out), type, op, comm, nullptr), "reduce_scatter",
          comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                        const c10d::ReduceScatterOptions& opts) {
  CheckTensor(input, "_reduce_scatter_base");
  CheckTensor(output, "_reduce_scatter_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "strata _reduce_scatter_base: dtypes differ");
  TORCH_CHECK(input.numel() == size_ * output.numel(), "strata _reduce_scatter_base: input has ", input.numel(),
              " elements, expected ", size_, " x ", output.numel());
  const strataDataType_t type = StrataType(output.scalar_type(), "_reduce_scatter_base");
  const strataRedOp_t op = StrataOp(opts.reduceOp, output.scalar_type(), "_reduce_scatter_base");
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, "strata:_reduce_scatter_base", {input}, {output}, [=] {
    Check(strataReduceScatter(input.data_ptr(), output.data_ptr(), Count(output), type, op, comm, nullptr),
          "_reduce_scatter_base", comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                                 std::vector<int64_t>& outputSplitSizes,
                                                                 std::vector<int64_t>& inputSplitSizes,
                                                                 const c10d::AllToAllOptions&) {
  CheckTensor(input, "alltoall_base");
  CheckTensor(output, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "strata alltoall_base: dtypes differ");
  TORCH_CHECK(input.numel() == 0 || output.data_ptr() != input.data_ptr(),
              "strata alltoall_base: cannot run in place (output and input share memory)");
  const strataDataType_t type = StrataType(input.scalar_type(), "alltoall_base");
  strataComm_t comm = comm_;
  if (outputSplitSizes.empty() && inputSplitSizes.empty()) {
    TORCH_CHECK(input.numel() % size_ == 0 && output.numel() == input.numel(), "strata alltoall_base: ",
                input.numel(), " input and ", output.numel(), " output elements do not split into ", size_,
                " equal blocks");
    const size_t count = Count(input) / static_cast<size_t>(size_);
    return enqueue(c10d::OpType::ALLTOALL_BASE, "strata:all_to_all", {input}, {output}, [=] {
      Check(strataAlltoAll(input.data_ptr(), output.data_ptr(), count, type, comm, nullptr), "alltoall_base", comm);
    });
  }
  // Uneven blocks: one send and one receive per peer (itself included), in one group.
  std::vector<size_t> sendCounts, recvCounts;
  const std::vector<size_t> sendOffsets = SplitOffsets(input, inputSplitSizes, size_, "input", &sendCounts);
  const std::vector<size_t> recvOffsets = SplitOffsets(output, outputSplitSizes, size_, "output", &recvCounts);
  TORCH_CHECK(input.numel() == 0 || output.numel() == 0 || input.numel() / input.size(0) == output.numel() / output.size(0),
              "strata alltoall_base: input and output rows have different sizes");
  const size_t elem = static_cast<size_t>(input.element_size());
  const int size = size_;
  return enqueue(c10d::OpType::ALLTOALL_BASE, "strata:all_to_all", {input}, {output}, [=] {
    auto* send = static_cast<const char*>(input.data_ptr());
    auto* recv = static_cast<char*>(output.data_ptr());
    RunGroup("alltoall_base", comm, [&](auto note) {
      for (int p = 0; p < size; ++p) {
        note(strataSend(send + sendOffsets[p] * elem, sendCounts[p], type, p, comm, nullptr));
        note(strataRecv(recv + recvOffsets[p] * elem, recvCounts[p], type, p, comm, nullptr));
      }
    });
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::alltoall(std::vector<at::Tensor>& outputs,
                                                            std::vector<at::Tensor>& inputs,
                                                            const c10d::AllToAllOptions&) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ && static_cast<int>(inputs.size()) == size_,
              "strata alltoall: expected ", size_, " input and ", size_, " output tensors");
  for (size_t p = 0; p < outputs.size(); ++p) {
    CheckTensor(inputs[p], "alltoall");
    CheckTensor(outputs[p], "alltoall");
    TORCH_CHECK(inputs[p].scalar_type() == inputs[0].scalar_type() &&
                    outputs[p].scalar_type() == inputs[0].scalar_type(),
                "strata alltoall: dtypes differ");
  }
  const strataDataType_t type = StrataType(inputs[0].scalar_type(), "alltoall");
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::ALLTOALL, "strata:all_to_all", inputs, outputs, [=] {
    RunGroup("alltoall", comm, [&](auto note) {
      for (int p = 0; p < static_cast<int>(inputs.size()); ++p) {
        note(strataSend(inputs[p].data_ptr(), Count(inputs[p]), type, p, comm, nullptr));
        note(strataRecv(outputs[p].data_ptr(), Count(outputs[p]), type, p, comm, nullptr));
      }
    });
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::send(std::vector<at::Tensor>& tensors, int dstRank, int) {
  const at::Tensor& t = SingleTensor(tensors, "send");
  CheckRank(dstRank, size_, "destination", "send");
  const strataDataType_t type = StrataType(t.scalar_type(), "send");
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::SEND, "strata:send", tensors, tensors, [=] {
    Check(strataSend(t.data_ptr(), Count(t), type, dstRank, comm, nullptr), "send", comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::recv(std::vector<at::Tensor>& tensors, int srcRank, int) {
  const at::Tensor& t = SingleTensor(tensors, "recv");
  CheckRank(srcRank, size_, "source", "recv");
  const strataDataType_t type = StrataType(t.scalar_type(), "recv");
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::RECV, "strata:recv", tensors, tensors, [=] {
    Check(strataRecv(t.data_ptr(), Count(t), type, srcRank, comm, nullptr), "recv", comm);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::barrier(const c10d::BarrierOptions&) {
  strataComm_t comm = comm_;
  return enqueue(c10d::OpType::BARRIER, "strata:barrier", {}, {}, [=] { Check(strataBarrier(comm), "barrier", comm); });
}

}  // namespace strata_torch
