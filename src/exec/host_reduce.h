// Element-wise reduction and conversion on host memory, vectorized with runtime dispatch
// (AVX-512, AVX2, scalar). The math per element comes from kernels/include/strata/reduce_math.h, shared
// with the CUDA kernels.
#pragma once

#include <cstddef>

#include "strata/strata.h"

namespace strata {

enum class SimdIsa { Scalar = 0, Avx2 = 1, Avx512 = 2 };

// dst[i] = a[i] op b[i] for i < count. dst may alias a or b (exactly, not partially). fp16, bf16 and
// fp8 are computed in fp32 and rounded to nearest even once per element. strataAvg reduces like
// strataSum; when `divisor` > 1 the result is divided by it (the last step of an average: float types
// divide in their accumulation type, integers truncate).
void HostReduce(void* dst, const void* a, const void* b, size_t count, strataDataType_t type, strataRedOp_t op,
                int divisor);

// dst[i] = src[i] / divisor, same rules as HostReduce's divisor (used for avg on one rank).
void HostDivide(void* dst, const void* src, size_t count, strataDataType_t type, int divisor);

// memcpy tuned for the slot sizes the executor moves (non-temporal stores above a threshold).
void HostCopy(void* dst, const void* src, size_t bytes);
// Copy with a plain vector loop whatever the size: for buffers of a few KiB copied again and again, where
// glibc's memcpy takes its `rep movsb` path (on the 2-vCPU EPYC VM a 1 KiB memcpy in the quantization loop
// halved its speed).
void HostCopyVector(void* dst, const void* src, size_t bytes);
// Copy with non-temporal stores whatever the size: for output that will not be read again soon and
// is too large to stay in cache, it saves reading each destination line before writing it.
void HostCopyStreaming(void* dst, const void* src, size_t bytes);
// Asks for the lines of [p, p + bytes) in a state that lets this core write them (prefetchw), without waiting: where
// other cores last read those lines, the writes that follow do not stall on invalidating their copies.
void HostClaimLines(const void* p, size_t bytes);
// HostReduce whose result goes to dst with non-temporal stores (through a small cache-resident buffer): for a
// slot another core will read, when the caches pass written lines between cores slowly (SlotStoreTuner).
void HostReduceStreaming(void* dst, const void* a, const void* b, size_t count, strataDataType_t type, strataRedOp_t op,
                         int divisor);

// The ISA in use: the best the CPU supports, unless forced (tests force each one to compare them).
SimdIsa HostReduceIsa();
const char* SimdIsaName(SimdIsa isa);
// Forces an ISA; returns false (and changes nothing) when the CPU lacks it.
bool ForceHostReduceIsa(SimdIsa isa);

size_t DataTypeSize(strataDataType_t type);

}  // namespace strata
