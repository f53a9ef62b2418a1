// The ring pipeline, over any group of ranks and any buffers: shared by the flat ring plans and the
// hierarchical plans, which run rings within a host and between hosts.
#pragma once

#include <functional>
#include <vector>

#include "algorithms/collective.h"
#include "algorithms/plan.h"

namespace strata {

// Element range of each block's part for one channel, in "block space" (block j starts at its own
// offset): block j of the ring is [off[j], off[j] + len[j]).
struct RingLayout {
  int n = 1;
  std::vector<uint64_t> off, len;
  uint64_t maxLen = 0;
};

// n blocks of `blockStride` elements (the last ones clipped at `total`), channel `channel`'s part of
// each, offset by `base`.
RingLayout ChannelLayout(int n, uint64_t blockStride, uint64_t total, int channel, int nchannels, uint64_t base = 0);

enum class RingKind { AllReduce, ReduceScatter, AllGather };

// Offset of block b's piece (block-space offset `at`) in a buffer.
using OffsetFn = std::function<uint64_t(int block, uint64_t at)>;

struct RingSpec {
  RingKind kind = RingKind::AllReduce;
  int n = 1;        // ring members
  int me = 0;       // this rank's index among them; it ends owning block `me`
  int next = -1;    // global ranks of the neighbours
  int prev = -1;
  uint16_t srcBuf = kSendBuf;
  uint16_t dstBuf = kRecvBuf;
  bool divide = true;  // the final reduction of a block divides (average)
  uint64_t chunk = 1;  // piece size: see RingChunkElems
};

// Appends one channel's ring to `q`. Needs n >= 2.
void EmitRing(PlanQueue& q, const RingSpec& spec, const RingLayout& l, const OffsetFn& srcOff, const OffsetFn& dstOff);

}  // namespace strata
