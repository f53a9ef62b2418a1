// Trees over ranks: the binary tree shape of the double binary tree, and the per-chunk steps of a
// reduction up a tree and a broadcast down it. Shared by the tree and hierarchical plans.
#pragma once

#include <vector>

#include "algorithms/plan.h"

namespace strata {

// This rank's place in one tree (global ranks).
struct TreeNode {
  int parent = -1;  // -1: the root
  std::vector<int> children;
};

// A tree as the parent of every rank (-1 for the root and for ranks outside the tree).
using ParentTable = std::vector<int>;
TreeNode NodeOf(const ParentTable& parents, int rank);

// Parent of position v (1 <= v < m) in the balanced in-order binary tree over positions 0..m-1
// rooted at 0 (NCCL's btree: position 0 has one child, the top of an in-order tree).
int BtreeParent(int m, int v);

// Two trees over `members` (global ranks) that share no edge, so that each direction of every
// connection belongs to one tree. Positions map to members by identity for the first tree and by
// v -> (k * v + s) mod m for the second, with the first (k, s) that gives disjoint edges; `distinctRoots`
// asks for s != 0. Returns false (and the first tree only) when no such pair exists (m <= 4, 6, 9).
bool DisjointTreePair(const std::vector<int>& members, int nranks, bool distinctRoots, ParentTable* first,
                      ParentTable* second);

// Reduction of one chunk up the tree: leaves send `src`; inner ranks add their children's chunks
// (partials in `tmp`) and send the sum on; the root writes the total to `dst`, divided when `divide`.
void EmitTreeUpChunk(PlanQueue& q, const TreeNode& node, BufRef src, BufRef tmp, BufRef dst, uint64_t count,
                     bool divide);
// Broadcast of one chunk down the tree: the root sends `data`; the others receive it into `data` and
// pass it on to their children.
void EmitTreeDownChunk(PlanQueue& q, const TreeNode& node, BufRef data, uint64_t count);

}  // namespace strata
