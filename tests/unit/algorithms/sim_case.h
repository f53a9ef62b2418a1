// One collective through the plan simulator, checked element by element against a reference
// computed here from first principles (float64 over small integers). Shared by the plan tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "algorithms/algorithms.h"
#include "exec/host_reduce.h"
#include "sim/plan_simulator.h"

namespace strata {
namespace simcase {

// Small integers: sums and products of up to 64 of them are exact in float and double.
inline double InputValue(int rank, uint64_t i, strataRedOp_t op) {
  if (op == strataProd) return ((rank + i) % 5 == 0) ? 2.0 : (((rank + i) % 3 == 0) ? -1.0 : 1.0);
  return static_cast<double>(static_cast<int>((rank * 7 + i * 13) % 11) - 5);
}

inline void Store(strataDataType_t t, void* base, uint64_t i, double v) {
  if (t == strataFloat32) static_cast<float*>(base)[i] = static_cast<float>(v);
  else if (t == strataFloat64) static_cast<double*>(base)[i] = v;
  else static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v);
}

inline double Load(strataDataType_t t, const void* base, uint64_t i) {
  if (t == strataFloat32) return static_cast<const float*>(base)[i];
  if (t == strataFloat64) return static_cast<const double*>(base)[i];
  return static_cast<const int32_t*>(base)[i];
}

inline double Combine(strataRedOp_t op, double a, double b) {
  switch (op) {
    case strataProd: return a * b;
    case strataMax: return std::max(a, b);
    case strataMin: return std::min(a, b);
    default: return a + b;
  }
}

// The expected value of element i of `rank`'s receive buffer.
inline double Expected(const CollDesc& d, int n, int rank, uint64_t i) {
  auto reduceAt = [&](uint64_t idx) {
    double acc = InputValue(0, idx, d.op);
    for (int q = 1; q < n; ++q) acc = Combine(d.op, acc, InputValue(q, idx, d.op));
    if (d.op == strataAvg) acc /= n;
    return acc;
  };
  switch (d.kind) {
    case CollKind::AllReduce:
    case CollKind::Reduce: return reduceAt(i);
    case CollKind::Broadcast: return InputValue(d.root, i, d.op);
    case CollKind::AllGather: return InputValue(static_cast<int>(i / d.count), i % d.count, d.op);
    case CollKind::ReduceScatter: return reduceAt(rank * d.count + i);
    case CollKind::AlltoAll: return InputValue(static_cast<int>(i / d.count), rank * d.count + i % d.count, d.op);
  }
  return 0;
}

struct Sizes {
  uint64_t sendElems, recvElems;
};

inline Sizes SizesOf(const CollDesc& d, int n) {
  switch (d.kind) {
    case CollKind::AllGather: return {d.count, d.count * n};
    case CollKind::ReduceScatter: return {d.count * n, d.count};
    case CollKind::AlltoAll: return {d.count * n, d.count * n};
    default: return {d.count, d.count};
  }
}

// Runs the case and checks every output element; `algorithm` receives the name of the plan that ran.
inline void RunCase(const CollDesc& d, const PlanGeometry& geo, bool inPlace, const ForcedAlgos& forced = {},
                    std::string* algorithm = nullptr) {
  const int n = geo.nranks;
  const size_t es = DataTypeSize(d.dtype);
  const Sizes sz = SizesOf(d, n);
  std::vector<SimRankBuffers> bufs(n);
  for (int r = 0; r < n; ++r) {
    bufs[r].send.assign(sz.sendElems * es + 1, 0);
    bufs[r].recv.assign(std::max(sz.recvElems, sz.sendElems) * es + 1, 0x5a);  // poisoned
    // In place, the input lives in the receive buffer (at the rank's block for allgather).
    char* in = bufs[r].send.data();
    if (inPlace && d.kind != CollKind::ReduceScatter)
      in = d.kind == CollKind::AllGather ? bufs[r].recv.data() + r * d.count * es : bufs[r].recv.data();
    for (uint64_t i = 0; i < sz.sendElems; ++i) Store(d.dtype, in, i, InputValue(r, i, d.op));
  }
  Status st = SimulateCollective(d, geo, &bufs, inPlace, forced, algorithm);
  ASSERT_TRUE(st.ok()) << CollKindName(d.kind) << " " << forced.toString() << " n=" << n << " count=" << d.count
                       << ": " << st.message();
  for (int r = 0; r < n; ++r) {
    if (d.kind == CollKind::Reduce && r != d.root) continue;
    const char* out = bufs[r].recv.data();
    if (inPlace && d.kind == CollKind::ReduceScatter) out = bufs[r].send.data() + r * d.count * es;
    for (uint64_t i = 0; i < sz.recvElems; ++i) {
      const double want = Expected(d, n, r, i), got = Load(d.dtype, out, i);
      const double tol = d.op == strataAvg ? 1e-6 * (1 + std::fabs(want)) : 0;
      double wantTyped = want;
      if (d.dtype == strataInt32 && d.op == strataAvg) wantTyped = std::trunc(want);
      ASSERT_LE(std::fabs(got - wantTyped), d.dtype == strataInt32 && d.op == strataAvg ? 1.0 : tol)
          << CollKindName(d.kind) << " " << forced.toString() << " n=" << n << " rank " << r << " count " << d.count
          << " elem " << i << " channels " << geo.nchannels << (inPlace ? " in-place" : "");
    }
  }
}

// Geometry with tiny FIFO slots, so that even small counts run many pipelined rounds.
inline PlanGeometry TinyGeometry(int n, int channels) {
  PlanGeometry g;
  g.nranks = n;
  g.slotBytes = 64;  // 16 floats
  g.nslots = 4;
  g.nchannels = channels;
  g.directMaxBytes = 64;
  g.windowBytes = 4096;  // oneshot/twoshot: small counts fit, the largest of each case falls back
  return g;
}

}  // namespace simcase
}  // namespace strata
