// Runtime dispatch of the host reductions: picks the best kernel table the CPU can run, once.
#include "exec/host_reduce.h"

#include <cpuid.h>
#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "exec/reduce/host_reduce_impl.h"

namespace strata {
namespace {

// F16C through cpuid: clang's __builtin_cpu_supports does not know "f16c".
bool CpuHasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

bool CpuHasAvx2Set() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && CpuHasF16c();
}

// The AVX-512 unit is compiled with all of these (and AVX2/FMA/F16C), so GCC may use any of them.
bool CpuHasAvx512Set() {
  __builtin_cpu_init();
  return CpuHasAvx2Set() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
}

bool CpuSupports(SimdIsa isa) {
  switch (isa) {
    case SimdIsa::Scalar:
      return true;
    case SimdIsa::Avx2:
      return CpuHasAvx2Set();
    case SimdIsa::Avx512:
      return CpuHasAvx512Set();
  }
  return false;
}

SimdIsa BestIsa() {
  if (CpuSupports(SimdIsa::Avx512)) return SimdIsa::Avx512;
  if (CpuSupports(SimdIsa::Avx2)) return SimdIsa::Avx2;
  return SimdIsa::Scalar;
}

const reduce::HostReduceKernels& TableFor(SimdIsa isa) {
  switch (isa) {
    case SimdIsa::Avx512:
      return reduce_avx512::Table();
    case SimdIsa::Avx2:
      return reduce_avx2::Table();
    case SimdIsa::Scalar:
      break;
  }
  return reduce_scalar::Table();
}

// The ISA in use. Atomic so a test forcing an ISA does not race with a reduction on another thread.
std::atomic<int>& CurrentIsa() {
  static std::atomic<int> isa{static_cast<int>(BestIsa())};
  return isa;
}

const reduce::HostReduceKernels& Kernels() {
  return TableFor(static_cast<SimdIsa>(CurrentIsa().load(std::memory_order_relaxed)));
}

// A bad type or op is a bug in the caller (the API layer validates user input), and returning would leave
// dst silently wrong.
[[noreturn]] void InvalidArgument(const char* what, int value) {
  std::fprintf(stderr, "strata: host reduction called with invalid %s %d\n", what, value);
  std::abort();
}

// Past this size the destination would not stay in cache anyway, and streaming stores (no read-for-ownership
// of the destination lines) copied 1.5-2.5x faster than glibc's memcpy at 8-64 MiB on the 2-vCPU EPYC dev VM,
// while memcpy won at 1-4 MiB.
constexpr size_t kStreamingCopyBytes = size_t{8} << 20;

// SSE2 is baseline x86-64, so this needs no dispatch; wider stores measured no faster once memory bound.
void StreamingCopy(uint8_t* dst, const uint8_t* src, size_t bytes) {
  // Align dst to a cache line so each group of four stores fills one line.
  const size_t head = std::min(bytes, (64 - (reinterpret_cast<uintptr_t>(dst) & 63)) & 63);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i), v0);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 16), v1);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 32), v2);
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst + i + 48), v3);
  }
  // Streaming stores are weakly ordered: fence so a flag written after the copy (e.g. a shared-memory
  // FIFO's tail) cannot become visible before the data.
  _mm_sfence();
  std::memcpy(dst + i, src + i, bytes - i);
}

// glibc's memcpy moves mid-sized buffers with `rep movsb`, which ran 3x slower than a plain vector
// loop between shared-memory slots and user buffers on the 2-vCPU EPYC VM (1 MiB allreduce: 867 us
// against 293 us with rep movsb disabled). Plain 16-byte loads and stores, unrolled to a cache line.
void VectorCopy(uint8_t* dst, const uint8_t* src, size_t bytes) {
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i v0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i v1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 16));
    const __m128i v2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 32));
    const __m128i v3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 48));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), v0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 16), v1);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 32), v2);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i + 48), v3);
  }
  std::memcpy(dst + i, src + i, bytes - i);
}

// Below this, memcpy's small-size paths are as good as anything.
constexpr size_t kVectorCopyBytes = 4096;

}  // namespace

void HostReduce(void* dst, const void* a, const void* b, size_t count, strataDataType_t type, strataRedOp_t op,
                int divisor) {
  if (type < 0 || type >= strataNumTypes) InvalidArgument("data type", type);
  if (op < 0 || op >= strataNumOps) InvalidArgument("op", op);
  if (count == 0) return;
  const int kernel_op = op == strataAvg ? strataSum : op;
  Kernels().reduce[type][kernel_op](dst, a, b, count, divisor);
}

void HostReduceStreaming(void* dst, const void* a, const void* b, size_t count, strataDataType_t type, strataRedOp_t op,
                         int divisor) {
  if (type < 0 || type >= strataNumTypes) InvalidArgument("data type", type);
  // Blocks small enough that the reduction's output is still in L1 when it is streamed out.
  constexpr size_t kBlockBytes = 8192;
  alignas(64) uint8_t block[kBlockBytes];
  const size_t esize = DataTypeSize(type), per = kBlockBytes / esize;
  auto* out = static_cast<uint8_t*>(dst);
  const auto *x = static_cast<const uint8_t*>(a), *y = static_cast<const uint8_t*>(b);
  for (size_t i = 0; i < count; i += per) {
    const size_t n = std::min(per, count - i);
    HostReduce(block, x + i * esize, y + i * esize, n, type, op, divisor);
    StreamingCopy(out + i * esize, block, n * esize);
  }
}

void HostDivide(void* dst, const void* src, size_t count, strataDataType_t type, int divisor) {
  if (type < 0 || type >= strataNumTypes) InvalidArgument("data type", type);
  if (count == 0) return;
  if (divisor <= 1) {
    if (dst != src) std::memcpy(dst, src, count * DataTypeSize(type));
    return;
  }
  Kernels().divide[type](dst, src, count, divisor);
}

void HostCopy(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  if (bytes >= kStreamingCopyBytes) {
    StreamingCopy(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
  } else if (bytes >= kVectorCopyBytes) {
    VectorCopy(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

void HostCopyVector(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  VectorCopy(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
}

void HostClaimLines(const void* p, size_t bytes) {
  if (bytes == 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) & ~uintptr_t{63};
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t line = first; line < end; line += 64) {
#if defined(__x86_64__)
    // prefetchw: on processors without it (Intel before Broadwell) the opcode is a no-op.
    asm volatile("prefetchw (%0)" ::"r"(line));
#else
    __builtin_prefetch(reinterpret_cast<const void*>(line), 1, 3);
#endif
  }
}

void HostCopyStreaming(void* dst, const void* src, size_t bytes) {
  if (bytes == 0 || dst == src) return;
  StreamingCopy(static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes);
}

SimdIsa HostReduceIsa() { return static_cast<SimdIsa>(CurrentIsa().load(std::memory_order_relaxed)); }

const char* SimdIsaName(SimdIsa isa) {
  switch (isa) {
    case SimdIsa::Scalar:
      return "scalar";
    case SimdIsa::Avx2:
      return "avx2";
    case SimdIsa::Avx512:
      return "avx512";
  }
  return "unknown";
}

bool ForceHostReduceIsa(SimdIsa isa) {
  if (isa != SimdIsa::Scalar && isa != SimdIsa::Avx2 && isa != SimdIsa::Avx512) return false;
  if (!CpuSupports(isa)) return false;
  CurrentIsa().store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

size_t DataTypeSize(strataDataType_t type) {
  switch (type) {
    case strataInt8:
    case strataUint8:
    case strataFloat8e4m3:
    case strataFloat8e5m2:
      return 1;
    case strataFloat16:
    case strataBfloat16:
      return 2;
    case strataInt32:
    case strataUint32:
    case strataFloat32:
      return 4;
    case strataInt64:
    case strataUint64:
    case strataFloat64:
      return 8;
    case strataNumTypes:
      break;
  }
  return 0;
}

}  // namespace strata
