// Double binary tree (allreduce, broadcast, reduce), as NCCL runs it: two trees, each carrying half
// of the data, pipelined chunk by chunk, so that the links of leaves in one tree work in the other.
// The two trees share no edge (see DisjointTreePair), so every connection direction belongs to one
// queue; where no such pair exists (4, 6, 9 or fewer ranks in the trees) one tree carries everything.
//
// Allreduce: reduce up to the tree's root, which divides (average) and sends the chunk back down.
// Each non-root rank has an up queue and a down queue per tree and channel: the down queue writes a
// chunk only after the root has the whole sum of it, so after this rank's up queue has read it.
// Broadcast and reduce: the root sits above the two trees built over the other ranks.
#include <algorithm>
#include <numeric>

#include "algorithms/algorithms.h"
#include "algorithms/plan_builder.h"
#include "algorithms/tree_emit.h"
#include "exec/host_reduce.h"

namespace strata {

namespace {

// Part i of k of [0, count).
void Part(uint64_t count, int i, int k, uint64_t* off, uint64_t* len) {
  *off = count * i / k;
  *len = count * (i + 1) / k - *off;
}

struct TreeSet {
  int ntrees = 1;
  ParentTable parents[2];
};

TreeSet AllReduceTrees(int n) {
  TreeSet s;
  std::vector<int> members(n);
  std::iota(members.begin(), members.end(), 0);
  s.ntrees = DisjointTreePair(members, n, false, &s.parents[0], &s.parents[1]) ? 2 : 1;
  return s;
}

// Trees over every rank but the root, whose roots hang under `root`.
TreeSet RootedTrees(int n, int root) {
  TreeSet s;
  std::vector<int> members;
  for (int i = 1; i < n; ++i) members.push_back(Mod(root + i, n));
  s.ntrees = DisjointTreePair(members, n, true, &s.parents[0], &s.parents[1]) ? 2 : 1;
  for (int t = 0; t < s.ntrees; ++t)
    for (int m : members)
      if (s.parents[t][m] < 0) s.parents[t][m] = root;
  return s;
}

// Calls fn(channel, offset, length) for each channel's part of tree t's half.
template <typename Fn>
void ForEachPart(uint64_t count, int t, int ntrees, int nchannels, Fn fn) {
  uint64_t ho, hl;
  Part(count, t, ntrees, &ho, &hl);
  for (int c = 0; c < nchannels; ++c) {
    uint64_t o, l;
    Part(hl, c, nchannels, &o, &l);
    fn(c, ho + o, l);
  }
}

}  // namespace

TreeShape TreeShapeOf(int nranks, bool rooted) {
  TreeShape shape;
  if (nranks < 2) return shape;
  const TreeSet trees = rooted ? RootedTrees(nranks, 0) : AllReduceTrees(nranks);
  shape.ntrees = trees.ntrees;
  for (int t = 0; t < trees.ntrees; ++t) {
    const ParentTable& parents = trees.parents[t];
    std::vector<int> children(nranks, 0);
    for (int r = 0; r < nranks; ++r) {
      int hops = 0;
      for (int up = parents[r]; up >= 0; up = parents[up]) ++hops;
      shape.depth = std::max(shape.depth, hops);
      if (parents[r] >= 0) shape.maxChildren = std::max(shape.maxChildren, ++children[parents[r]]);
    }
  }
  return shape;
}

Plan TreeAllReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("tree", desc, geo);
  plan.nBuffers = 3;
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const TreeSet trees = AllReduceTrees(n);
  int slot = 0;
  for (int t = 0; t < trees.ntrees; ++t) {
    const TreeNode node = NodeOf(trees.parents[t], r);
    ForEachPart(desc.count, t, trees.ntrees, geo.nchannels, [&](int c, uint64_t off, uint64_t len) {
      const BufRef tmp = Ref(kScratchBuf, static_cast<uint64_t>(slot++) * chunk);
      const size_t up = plan.queues.size();
      plan.addQueue(c);
      size_t down = up;
      if (node.parent >= 0) {
        down = plan.queues.size();
        plan.addQueue(c);
      }
      for (uint64_t at = 0; at < len; at += chunk) {
        const uint64_t cnt = std::min(chunk, len - at);
        EmitTreeUpChunk(plan.queues[up], node, Ref(kSendBuf, off + at), tmp, Ref(kRecvBuf, off + at), cnt, true);
        EmitTreeDownChunk(plan.queues[down], node, Ref(kRecvBuf, off + at), cnt);
      }
    });
  }
  plan.scratchElems = static_cast<uint64_t>(slot) * chunk;
  return plan;
}

Plan TreeBroadcastPlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("tree", desc, geo);
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const TreeSet trees = RootedTrees(n, desc.root);
  const bool isRoot = r == desc.root;
  if (isRoot) Emit(plan.addQueue(0), StepOp::Copy, -1, -1, Ref(kSendBuf, 0), Ref(kRecvBuf, 0), desc.count);
  for (int t = 0; t < trees.ntrees; ++t) {
    const TreeNode node = NodeOf(trees.parents[t], r);
    if (!isRoot && node.parent < 0 && node.children.empty()) continue;  // not in this tree
    ForEachPart(desc.count, t, trees.ntrees, geo.nchannels, [&](int c, uint64_t off, uint64_t len) {
      PlanQueue& q = plan.addQueue(c);
      for (uint64_t at = 0; at < len; at += chunk)
        EmitTreeDownChunk(q, node, Ref(isRoot ? kSendBuf : kRecvBuf, off + at), std::min(chunk, len - at));
    });
  }
  return plan;
}

Plan TreeReducePlan(const CollDesc& desc, const PlanGeometry& geo) {
  const int n = geo.nranks, r = geo.rank;
  if (n == 1) return SingleRankPlan(desc, geo, desc.count);
  Plan plan = NewPlan("tree", desc, geo);
  plan.nBuffers = 3;  // partial sums of inner ranks go to scratch: only the root's receive buffer is valid
  const uint64_t chunk = RingChunkElems(geo, DataTypeSize(desc.dtype));
  const TreeSet trees = RootedTrees(n, desc.root);
  int slot = 0;
  for (int t = 0; t < trees.ntrees; ++t) {
    const TreeNode node = NodeOf(trees.parents[t], r);
    if (node.parent < 0 && node.children.empty()) continue;
    ForEachPart(desc.count, t, trees.ntrees, geo.nchannels, [&](int c, uint64_t off, uint64_t len) {
      const BufRef tmp = Ref(kScratchBuf, static_cast<uint64_t>(slot++) * chunk);
      PlanQueue& q = plan.addQueue(c);
      for (uint64_t at = 0; at < len; at += chunk)
        EmitTreeUpChunk(q, node, Ref(kSendBuf, off + at), tmp, Ref(kRecvBuf, off + at), std::min(chunk, len - at),
                        true);
    });
  }
  plan.scratchElems = static_cast<uint64_t>(slot) * chunk;
  return plan;
}

}  // namespace strata
