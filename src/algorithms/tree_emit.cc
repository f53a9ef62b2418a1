#include "algorithms/tree_emit.h"

#include <algorithm>
#include <numeric>

#include "algorithms/plan_builder.h"

namespace strata {

TreeNode NodeOf(const ParentTable& parents, int rank) {
  TreeNode node;
  node.parent = parents[rank];
  for (int r = 0; r < static_cast<int>(parents.size()); ++r)
    if (parents[r] == rank) node.children.push_back(r);
  return node;
}

int BtreeParent(int m, int v) {
  if (v <= 0) return -1;
  int bit = 1;
  while (bit < m && !(bit & v)) bit <<= 1;
  int up = (v ^ bit) | (bit << 1);
  if (up >= m) up = v ^ bit;
  return up;
}

namespace {

uint64_t EdgeKey(int a, int b) {
  if (a > b) std::swap(a, b);
  return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
}

// The tree over `members` with position v at members[perm(v)].
ParentTable MapTree(const std::vector<int>& members, int nranks, int k, int s) {
  const int m = static_cast<int>(members.size());
  ParentTable parents(nranks, -1);
  for (int v = 1; v < m; ++v) {
    const int pv = BtreeParent(m, v);
    parents[members[(static_cast<int64_t>(k) * v + s) % m]] = members[(static_cast<int64_t>(k) * pv + s) % m];
  }
  return parents;
}

}  // namespace

bool DisjointTreePair(const std::vector<int>& members, int nranks, bool distinctRoots, ParentTable* first,
                      ParentTable* second) {
  const int m = static_cast<int>(members.size());
  *first = MapTree(members, nranks, 1, 0);
  std::vector<uint64_t> edges;
  for (int r = 0; r < nranks; ++r)
    if ((*first)[r] >= 0) edges.push_back(EdgeKey(r, (*first)[r]));
  std::sort(edges.begin(), edges.end());
  // A handful of multipliers and shifts finds a pair for every m tried (7, 8, 10 ... 300) except 4, 6, 9.
  const int kMax = std::min(m - 1, 40), sMax = std::min(m - 1, 40);
  for (int k = 2; k <= kMax; ++k) {
    if (std::gcd(k, m) != 1) continue;
    for (int s = distinctRoots ? 1 : 0; s <= sMax; ++s) {
      bool clash = false;
      for (int v = 1; v < m && !clash; ++v) {
        const int a = members[(static_cast<int64_t>(k) * v + s) % m];
        const int b = members[(static_cast<int64_t>(k) * BtreeParent(m, v) + s) % m];
        clash = std::binary_search(edges.begin(), edges.end(), EdgeKey(a, b));
      }
      if (!clash) {
        *second = MapTree(members, nranks, k, s);
        return true;
      }
    }
  }
  return false;
}

void EmitTreeUpChunk(PlanQueue& q, const TreeNode& node, BufRef src, BufRef tmp, BufRef dst, uint64_t count,
                     bool divide) {
  const size_t nc = node.children.size();
  if (nc == 0) {
    if (node.parent >= 0) Emit(q, StepOp::Send, -1, node.parent, src, {}, count);
    else Emit(q, StepOp::Copy, -1, -1, src, dst, count);
    return;
  }
  BufRef acc = src;
  for (size_t j = 0; j + 1 < nc; ++j) {
    Emit(q, StepOp::RecvReduce, node.children[j], -1, acc, tmp, count);
    acc = tmp;
  }
  if (node.parent >= 0) Emit(q, StepOp::RecvReduceSend, node.children[nc - 1], node.parent, acc, {}, count);
  else Emit(q, StepOp::RecvReduce, node.children[nc - 1], -1, acc, dst, count, divide);
}

void EmitTreeDownChunk(PlanQueue& q, const TreeNode& node, BufRef data, uint64_t count) {
  size_t first = 0;
  if (node.parent >= 0) {
    if (node.children.empty()) {
      Emit(q, StepOp::Recv, node.parent, -1, {}, data, count);
      return;
    }
    Emit(q, StepOp::RecvCopySend, node.parent, node.children[0], {}, data, count);
    first = 1;
  }
  for (size_t j = first; j < node.children.size(); ++j) Emit(q, StepOp::Send, -1, node.children[j], data, {}, count);
}

}  // namespace strata
