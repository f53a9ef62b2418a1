// The sizes from which the one/two-shot plans copy in place by cross-memory attach, as docs/ALGORITHMS.md's table
// ("Cross-memory attach") gives them: the tests' own reference, written out rather than taken from the library.
#pragma once

#include <cstdint>

#include "algorithms/collective.h"

namespace strata {
namespace test {

// The whole vector's bytes from which `kind` on `nranks` goes in place (where the window also holds it).
inline uint64_t ExpectedInPlaceBytes(CollKind kind, int nranks, bool oversubscribed) {
  const bool allreduce = kind == CollKind::AllReduce, few = nranks <= 4;
  if (nranks <= 2) return 8 << 10;
  if (oversubscribed) return allreduce ? 256 << 10 : 512 << 10;
  if (allreduce) return few ? 256 << 10 : 512 << 10;
  return few ? 128 << 10 : 256 << 10;
}

}  // namespace test
}  // namespace strata
