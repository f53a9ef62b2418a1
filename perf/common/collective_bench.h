// What a perf tool says about its collective; perf_runner does the rest (flags, sweep, timing, checks,
// output). A tool is a subclass of CollectiveBench and a main() that calls RunCollectiveBench.
#pragma once

#include <cstddef>

#include "result_check.h"
#include "strata/strata.h"
#include "strata_call.h"

namespace strata::perf {

// Buffers of one call, in elements.
struct BufferShape {
  size_t count = 0;              // the call's count argument; printed in the count column, as nccl-tests does
  size_t sendCount = 0;          // elements each rank's send buffer holds
  size_t recvCount = 0;          // elements each rank's receive buffer holds
  size_t sendInPlaceOffset = 0;  // in-place: send = base + rank * sendInPlaceOffset
  size_t recvInPlaceOffset = 0;  // in-place: recv = base + rank * recvInPlaceOffset
};

// A call whose count, send and receive buffers are all `elements` (allreduce, broadcast, reduce, send/recv).
inline BufferShape SameCountShape(size_t elements) {
  BufferShape s;
  s.count = s.sendCount = s.recvCount = elements;
  return s;
}

struct CallArgs {
  const void* send;
  void* recv;
  size_t count;
  strataDataType_t type;
  strataRedOp_t op;  // strataSum for collectives that do not reduce
  int root;          // -1 for collectives without a root
  strataComm_t comm;
  int rank;
  int nranks;
  const strataQuantOptions_t* quant;  // -q: the Ex entry point with this spec; NULL: the plain call
};

// Identifies one output buffer: rank `rank` of `nranks`, after a call with this root and count.
struct OutputPlace {
  int rank;
  int nranks;
  int root;
  size_t count;
};

class CollectiveBench {
 public:
  virtual ~CollectiveBench() = default;

  virtual const char* name() const = 0;
  virtual bool reduces() const { return false; }
  virtual bool rooted() const { return false; }
  // False where strata defines no in-place form: the in-place columns then time the out-of-place call again.
  virtual bool hasInPlace() const { return true; }
  // Sizes round down to a multiple of (type size x this), as nccl-tests does.
  virtual size_t sizeDivisor(int /*nranks*/) const { return 1; }
  // `elements`: the size column divided by the type size, already a multiple of sizeDivisor.
  virtual BufferShape shape(size_t elements, int nranks) const = 0;
  virtual double busBwFactor(int nranks) const = 0;
  // Whether the tool has a quantized form (-q: strataAllReduceEx, strataReduceScatterEx, strataAllGatherEx).
  virtual bool quantizable() const { return false; }
  // Whether this rank's send buffer matters (broadcast: the root's only).
  virtual bool hasInput(int /*rank*/, int /*root*/) const { return true; }
  // Runs the collective once; failures go through PERF_STRATA_CHECK.
  virtual void run(const CallArgs& args) const = 0;
  // Where output element i of `place` comes from.
  virtual ElementSource expected(const OutputPlace& place, size_t i) const = 0;
};

// The whole tool: parses argv, runs the sweep, prints; returns the process exit status.
int RunCollectiveBench(int argc, char** argv, const CollectiveBench& bench);

}  // namespace strata::perf
