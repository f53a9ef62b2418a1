// Every collective x every datatype x every op (at 2^20+3 elements, a subset: see OpsFor) x counts
// {0, 1, 7, 1000, 2^20+3}, out of place and in place, over shared memory, TCP and two fake nodes, against a
// reference computed here: every rank generates every rank's input from a hash of (seed, rank, index) and
// reduces it in double (float types) or in wrapping integer arithmetic. One fork per configuration; the ranks
// loop over all cases inside it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "mp/mp_harness.h"
#include "support/ref_numerics.h"

namespace strata {
namespace test {
namespace {

enum class Kind { kSigned, kUnsigned, kFloat };

struct TypeDesc {
  strataDataType_t type;
  Kind kind;
  const char* name;
  size_t size;
  const ref::FloatFormat* format;  // float types only
};

const TypeDesc kTypes[] = {
    {strataInt8, Kind::kSigned, "int8", 1, nullptr},          {strataUint8, Kind::kUnsigned, "uint8", 1, nullptr},
    {strataInt32, Kind::kSigned, "int32", 4, nullptr},        {strataUint32, Kind::kUnsigned, "uint32", 4, nullptr},
    {strataInt64, Kind::kSigned, "int64", 8, nullptr},        {strataUint64, Kind::kUnsigned, "uint64", 8, nullptr},
    {strataFloat16, Kind::kFloat, "fp16", 2, &ref::kFp16},    {strataFloat32, Kind::kFloat, "fp32", 4, &ref::kFp32},
    {strataFloat64, Kind::kFloat, "fp64", 8, &ref::kFp64},    {strataBfloat16, Kind::kFloat, "bf16", 2, &ref::kBf16},
    {strataFloat8e4m3, Kind::kFloat, "e4m3", 1, &ref::kE4M3}, {strataFloat8e5m2, Kind::kFloat, "e5m2", 1, &ref::kE5M2},
};
static_assert(sizeof(kTypes) / sizeof(kTypes[0]) == strataNumTypes, "one entry per datatype");

const char* const kOpNames[] = {"sum", "prod", "max", "min", "avg"};
const strataRedOp_t kOps[] = {strataSum, strataProd, strataMax, strataMin, strataAvg};
constexpr size_t kLargeCount = (size_t{1} << 20) + 3;
constexpr size_t kCounts[] = {0, 1, 7, 1000, kLargeCount};
constexpr int kMaxRanks = 8;  // the exact-element ranges below assume at most 8 contributions

// The ops the reducing collectives run for kTypes[typeIndex] at count c. Up to 1000 elements, all of them. At
// the large count, which adds pipelining over many slots and the ring allreduce (smaller allreduces take the
// direct path), each type runs sum (rounding at every hop) and one other op in turn, so that each op runs at
// scale on three types of different widths (prod: int8 int64 fp64; max: uint8 uint64 bf16; min: int32 fp16
// e4m3; avg: uint32 fp32 e5m2). All 60 pairs at 2^20 elements and 8 ranks take minutes on two cores.
std::vector<strataRedOp_t> OpsFor(size_t typeIndex, size_t c) {
  if (c < kLargeCount) return std::vector<strataRedOp_t>(std::begin(kOps), std::end(kOps));
  return {strataSum, kOps[1 + typeIndex % 4]};
}

constexpr size_t kGuardBytes = 256;
constexpr uint8_t kPoison = 0xa5;
constexpr int kMaxReportedPerCase = 3;
constexpr int kMaxReportedCases = 12;

uint64_t Mix(uint64_t x) {  // murmur3's finalizer: cheap, and every input bit reaches every output bit
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

uint64_t Load(const uint8_t* p, size_t size) {
  switch (size) {
    case 1:
      return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

void Store(uint8_t* p, uint64_t bits, size_t size) {
  switch (size) {
    case 1:
      *p = static_cast<uint8_t>(bits);
      break;
    case 2: {
      const uint16_t v = static_cast<uint16_t>(bits);
      std::memcpy(p, &v, 2);
      break;
    }
    case 4: {
      const uint32_t v = static_cast<uint32_t>(bits);
      std::memcpy(p, &v, 4);
      break;
    }
    default:
      std::memcpy(p, &bits, 8);
  }
}

// 2^e for e in double's normal range, without ldexp's cost in the checking loops.
double Pow2(int e) {
  const uint64_t bits = static_cast<uint64_t>(e + 1023) << 52;
  double d;
  std::memcpy(&d, &bits, 8);
  return d;
}

int64_t SignExtend(uint64_t bits, size_t size) {
  if (size == 8) return static_cast<int64_t>(bits);
  const uint64_t sign = 1ull << (8 * size - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

// One datatype's inputs: the storage bits of element `index` of rank `rank`'s input, a pure function of
// (seed, rank, index), so that every rank knows every rank's input.
//
// Float elements come in two kinds, chosen by index (so all ranks agree):
//  - exact: small integers (|k| <= 2; 1 for e5m2), so every partial sum (|s| <= 16; 8 for e5m2, with at most
//    8 ranks) and every partial product (0 or +-2^j, j <= 8) is representable in every format, whatever the
//    order of the operations. These must match exactly, which catches a lost or doubled contribution even in
//    fp8, where the rounding bound below is as large as the values;
//  - rounding: +-[1, 2) with a random mantissa, so sums and products round at every hop; checked against the
//    error bound of that rounding (see CheckReduced).
// Integer elements are random over the full width, so sums and products wrap.
class InputModel {
 public:
  InputModel(const TypeDesc& t, uint64_t seed) : t_(t), seed_(seed) {
    mask_ = t.size == 8 ? ~0ull : (1ull << (8 * t.size)) - 1;
    if (t.kind != Kind::kFloat) return;
    const ref::FloatFormat& f = *t.format;
    const int mag = f.mant_bits >= 3 ? 2 : 1;
    for (int k = -mag; k <= mag; ++k) exactBits_[numExact_++] = ref::Encode(k, f);
    one_ = static_cast<uint64_t>(f.bias) << f.mant_bits;
    signBit_ = 1ull << (ref::TotalBits(f) - 1);
    mantMask_ = (1ull << f.mant_bits) - 1;
    if (t.size <= 2) {
      lut_.resize(size_t{1} << (8 * t.size));
      for (size_t b = 0; b < lut_.size(); ++b) lut_[b] = ref::Decode(b, f);
    }
  }

  static bool ExactElement(uint64_t index) { return (index * 0x9e3779b97f4a7c15ull) >> 63; }

  uint64_t Bits(int rank, uint64_t index) const {
    return t_.kind == Kind::kFloat ? BitsOf<true>(rank, index) : BitsOf<false>(rank, index);
  }

  // dst[i] = Bits(rank, first + i), stored as the type.
  void Fill(uint8_t* dst, int rank, uint64_t first, size_t count) const {
    switch (t_.size) {
      case 1:
        FillAs<uint8_t>(dst, rank, first, count);
        break;
      case 2:
        FillAs<uint16_t>(dst, rank, first, count);
        break;
      case 4:
        FillAs<uint32_t>(dst, rank, first, count);
        break;
      default:
        FillAs<uint64_t>(dst, rank, first, count);
    }
  }

  // The value of float bits.
  double Value(uint64_t bits) const {
    if (!lut_.empty()) return lut_[bits];
    if (t_.size == 4) {
      const uint32_t b = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b, 4);
      return f;
    }
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }

  uint64_t mask() const { return mask_; }

 private:
  // Branch-free: the kind of element is random per index, so a branch would be mispredicted half the time.
  template <bool kFloat>
  uint64_t BitsOf(int rank, uint64_t index) const {
    const uint64_t h = Mix(seed_ ^ (static_cast<uint64_t>(rank) << 56) ^ (index * 0xd1b54a32d192ed03ull));
    if (!kFloat) return h & mask_;
    const uint64_t exact = exactBits_[((h >> 32) * numExact_) >> 32];
    const uint64_t rounding = ((h >> 63) * signBit_) | one_ | (h & mantMask_);
    return ExactElement(index) ? exact : rounding;
  }

  template <typename T>
  void FillAs(uint8_t* dst, int rank, uint64_t first, size_t count) const {
    const auto put = [dst](size_t i, uint64_t bits) {
      const T v = static_cast<T>(bits);
      std::memcpy(dst + i * sizeof(T), &v, sizeof(T));
    };
    if (t_.kind == Kind::kFloat)
      for (size_t i = 0; i < count; ++i) put(i, BitsOf<true>(rank, first + i));
    else
      for (size_t i = 0; i < count; ++i) put(i, BitsOf<false>(rank, first + i));
  }

  const TypeDesc& t_;
  uint64_t seed_;
  uint64_t mask_ = 0, one_ = 0, signBit_ = 0, mantMask_ = 0;
  uint64_t exactBits_[5] = {};
  uint64_t numExact_ = 0;
  std::vector<double> lut_;
};

// Heap bytes left uninitialized (unlike std::vector's), so that only the pages a case uses get touched.
class RawBuffer {
 public:
  void resize(size_t n) { p_.reset(new uint8_t[n]); }
  uint8_t* data() const { return p_.get(); }
  uint8_t& operator[](size_t i) const { return p_[i]; }

 private:
  std::unique_ptr<uint8_t[]> p_;
};

// The expected results of the reducing collectives over `count` elements.
struct ReducedRef {
  std::vector<uint8_t> bits[strataNumOps];  // exact results, as stored: every op of integers; max and min of floats
  std::vector<double> sum, sumAbs, prod;    // float types, in double
};

struct CaseCheck {
  explicit CaseCheck(std::string n) : name(std::move(n)) {}
  void Fail(const std::string& what) {
    if (++failures <= kMaxReportedPerCase) lines += "\n    " + what;
  }
  // The same for mismatches, which may be millions: `describe` formats one and runs only for those reported.
  template <typename Describe>
  void FailLazily(const Describe& describe) {
    if (++failures <= kMaxReportedPerCase) lines += "\n    " + describe();
  }
  std::string name;
  int failures = 0;
  std::string lines;
};

// What one rank does: every case in a fixed order (the same on every rank), recording mismatches and stopping
// at the first call that fails (the ranks may then be out of step).
class RankRunner {
 public:
  RankRunner(int rank, int nranks, strataComm_t comm) : r_(rank), n_(nranks), comm_(comm) {}

  std::string Run() {
    if (n_ > kMaxRanks) return "this test supports at most 8 ranks";
    // Sized once for the largest case; a page is only touched when a case uses it.
    const size_t maxBytes = n_ * kLargeCount * sizeof(uint64_t);
    for (auto* v : {&input_, &send_, &gathered_, &exchanged_}) v->resize(maxBytes);
    recv_.resize(maxBytes + kGuardBytes);
    for (size_t count : kCounts) {
      for (size_t k = 0; k < strataNumTypes; ++k) {
        if (!RunType(kTypes[k], OpsFor(k, count), count)) return report_;
      }
    }
    if (failedCases_ > kMaxReportedCases)
      report_ += "... and " + std::to_string(failedCases_ - kMaxReportedCases) + " more failed case(s)\n";
    return report_;
  }

 private:
  bool RunType(const TypeDesc& t, const std::vector<strataRedOp_t>& ops, size_t c) {
    const InputModel m(t, 0x5eed0000ull + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(t.type) + 1));
    const size_t bytes = c * t.size;
    // This rank's input: n * c elements (the collectives that take c use the first c). gathered_ holds every
    // rank's first c elements (what AllGather returns), exchanged_ holds element r * c + i of every rank (what
    // AlltoAll returns here); they are also the contributions to AllReduce and to this rank's ReduceScatter
    // block.
    m.Fill(input_.data(), r_, 0, n_ * c);
    for (int p = 0; p < n_; ++p) {
      if (p == r_) {
        std::memcpy(&gathered_[p * bytes], input_.data(), bytes);
        std::memcpy(&exchanged_[p * bytes], &input_[r_ * bytes], bytes);
      } else {
        m.Fill(&gathered_[p * bytes], p, 0, c);
        m.Fill(&exchanged_[p * bytes], p, r_ * c, c);
      }
    }
    std::vector<int> roots = {0};
    if (n_ > 1) roots.push_back(n_ - 1);

    ComputeReduced(t, m, gathered_.data(), c);
    for (strataRedOp_t op : ops)
      for (bool inPlace : {false, true})
        if (!AllReduceCase(t, m, op, c, inPlace)) return false;
    for (int root : roots)
      for (strataRedOp_t op : ops)
        for (bool inPlace : {false, true})
          if (!ReduceCase(t, m, op, root, c, inPlace)) return false;
    ComputeReduced(t, m, exchanged_.data(), c);  // this rank's block of the reduce-scatter
    for (strataRedOp_t op : ops)
      for (bool inPlace : {false, true})
        if (!ReduceScatterCase(t, m, op, c, inPlace)) return false;
    for (bool inPlace : {false, true})
      if (!AllGatherCase(t, c, inPlace)) return false;
    for (int root : roots)
      for (bool inPlace : {false, true})
        if (!BroadcastCase(t, root, c, inPlace)) return false;
    return AlltoAllCase(t, c) && SendRecvCase(t, c);
  }

  // ---- the cases ----

  bool AllReduceCase(const TypeDesc& t, const InputModel& m, strataRedOp_t op, size_t c, bool inPlace) {
    CaseCheck cc(Name("AllReduce", t, kOpNames[op], -1, c, inPlace));
    const size_t bytes = c * t.size;
    uint8_t* recv = recv_.data();
    const uint8_t* send = inPlace ? recv : PrepareSend(bytes);
    PrepareRecv(bytes, inPlace ? 0 : SIZE_MAX, bytes);
    if (!Called(cc, strataAllReduce(send, recv, c, t.type, op, comm_, nullptr))) return false;
    CheckReduced(cc, t, m, op, recv, c, 0);
    CheckPoison(cc, recv + bytes, kGuardBytes, "guard after recvbuff");
    if (!inPlace) CheckUnchanged(cc, send, input_.data(), bytes, "sendbuff");
    return Finish(cc);
  }

  bool ReduceCase(const TypeDesc& t, const InputModel& m, strataRedOp_t op, int root, size_t c, bool inPlace) {
    CaseCheck cc(Name("Reduce", t, kOpNames[op], root, c, inPlace));
    const size_t bytes = c * t.size;
    uint8_t* recv = recv_.data();
    const uint8_t* send = inPlace ? recv : PrepareSend(bytes);
    PrepareRecv(bytes, inPlace ? 0 : SIZE_MAX, bytes);
    if (!Called(cc, strataReduce(send, recv, c, t.type, op, root, comm_, nullptr))) return false;
    if (r_ == root) {
      CheckReduced(cc, t, m, op, recv, c, 0);
    } else if (inPlace) {
      CheckUnchanged(cc, recv, input_.data(), bytes, "non-root buffer (the result goes to the root only)");
    } else {
      CheckPoison(cc, recv, bytes, "non-root recvbuff (the result goes to the root only)");
    }
    CheckPoison(cc, recv + bytes, kGuardBytes, "guard after recvbuff");
    if (!inPlace) CheckUnchanged(cc, send, input_.data(), bytes, "sendbuff");
    return Finish(cc);
  }

  // In place, as NCCL: recvbuff = sendbuff + rank * recvcount.
  bool ReduceScatterCase(const TypeDesc& t, const InputModel& m, strataRedOp_t op, size_t c, bool inPlace) {
    CaseCheck cc(Name("ReduceScatter", t, kOpNames[op], -1, c, inPlace));
    const size_t bytes = c * t.size, longBytes = n_ * bytes;
    uint8_t* buf = recv_.data();
    const uint8_t* send = inPlace ? buf : PrepareSend(longBytes);
    uint8_t* recv = inPlace ? buf + r_ * bytes : buf;
    const size_t bufBytes = inPlace ? longBytes : bytes;
    PrepareRecv(bufBytes, inPlace ? 0 : SIZE_MAX, inPlace ? longBytes : 0);
    if (!Called(cc, strataReduceScatter(send, recv, c, t.type, op, comm_, nullptr))) return false;
    CheckReduced(cc, t, m, op, recv, c, r_ * c);
    CheckPoison(cc, buf + bufBytes, kGuardBytes, "guard after the buffer");
    if (!inPlace) CheckUnchanged(cc, send, input_.data(), longBytes, "sendbuff");
    return Finish(cc);
  }

  // In place, as NCCL: sendbuff = recvbuff + rank * sendcount.
  bool AllGatherCase(const TypeDesc& t, size_t c, bool inPlace) {
    CaseCheck cc(Name("AllGather", t, nullptr, -1, c, inPlace));
    const size_t bytes = c * t.size, longBytes = n_ * bytes;
    uint8_t* recv = recv_.data();
    const uint8_t* send = inPlace ? recv + r_ * bytes : PrepareSend(bytes);
    PrepareRecv(longBytes, inPlace ? r_ * bytes : SIZE_MAX, bytes);
    if (!Called(cc, strataAllGather(send, recv, c, t.type, comm_, nullptr))) return false;
    CheckCopy(cc, t, recv, gathered_.data(), c, 0);
    CheckPoison(cc, recv + longBytes, kGuardBytes, "guard after recvbuff");
    if (!inPlace) CheckUnchanged(cc, send, input_.data(), bytes, "sendbuff");
    return Finish(cc);
  }

  bool BroadcastCase(const TypeDesc& t, int root, size_t c, bool inPlace) {
    CaseCheck cc(Name("Broadcast", t, nullptr, root, c, inPlace));
    const size_t bytes = c * t.size;
    uint8_t* recv = recv_.data();
    const uint8_t* send = inPlace ? recv : PrepareSend(bytes);
    PrepareRecv(bytes, inPlace && r_ == root ? 0 : SIZE_MAX, bytes);
    if (!Called(cc, strataBroadcast(send, recv, c, t.type, root, comm_, nullptr))) return false;
    CheckCopy(cc, t, recv, gathered_.data() + root * bytes, c, 0, root);
    CheckPoison(cc, recv + bytes, kGuardBytes, "guard after recvbuff");
    if (!inPlace) CheckUnchanged(cc, send, input_.data(), bytes, "sendbuff");
    return Finish(cc);
  }

  // Block q of this rank's input goes to rank q; block p of the output came from rank p.
  bool AlltoAllCase(const TypeDesc& t, size_t c) {
    CaseCheck cc(Name("AlltoAll", t, nullptr, -1, c, false));
    const size_t bytes = c * t.size, longBytes = n_ * bytes;
    uint8_t* recv = recv_.data();
    const uint8_t* send = PrepareSend(longBytes);
    PrepareRecv(longBytes, SIZE_MAX, 0);
    if (!Called(cc, strataAlltoAll(send, recv, c, t.type, comm_, nullptr))) return false;
    CheckCopy(cc, t, recv, exchanged_.data(), c, r_ * c);
    CheckPoison(cc, recv + longBytes, kGuardBytes, "guard after recvbuff");
    CheckUnchanged(cc, send, input_.data(), longBytes, "sendbuff");
    if (n_ > 1 && c > 0) {
      // Rejected on every rank before anything moves, so the ranks stay in step.
      const strataResult_t rc = strataAlltoAll(recv, recv, c, t.type, comm_, nullptr);
      if (rc != strataInvalidArgument)
        cc.Fail("in-place AlltoAll returned " + std::to_string(rc) + " (" + strataGetLastError(comm_) +
                "), want strataInvalidArgument");
    }
    return Finish(cc);
  }

  // One group: a send to and a receive from every rank, this one included; same layout as AlltoAll.
  bool SendRecvCase(const TypeDesc& t, size_t c) {
    CaseCheck cc(Name("Send/Recv group", t, nullptr, -1, c, false));
    const size_t bytes = c * t.size, longBytes = n_ * bytes;
    uint8_t* recv = recv_.data();
    const uint8_t* send = PrepareSend(longBytes);
    PrepareRecv(longBytes, SIZE_MAX, 0);
    strataResult_t rc = strataGroupStart();
    for (int k = 0; k < n_ && rc == strataSuccess; ++k) {
      const int to = (r_ + k) % n_, from = (r_ - k + n_) % n_;
      rc = strataSend(send + to * bytes, c, t.type, to, comm_, nullptr);
      if (rc == strataSuccess) rc = strataRecv(recv + from * bytes, c, t.type, from, comm_, nullptr);
    }
    const strataResult_t end = strataGroupEnd();  // always, so the group depth is restored
    if (!Called(cc, rc != strataSuccess ? rc : end)) return false;
    CheckCopy(cc, t, recv, exchanged_.data(), c, r_ * c);
    CheckPoison(cc, recv + longBytes, kGuardBytes, "guard after the receive buffers");
    CheckUnchanged(cc, send, input_.data(), longBytes, "send buffers");
    return Finish(cc);
  }

  // ---- buffers ----

  const uint8_t* PrepareSend(size_t bytes) {
    if (bytes) std::memcpy(send_.data(), input_.data(), bytes);
    return send_.data();
  }

  // Poisons recvbuff's `bytes` and the guard after them; with inputAt != SIZE_MAX, copies this rank's first
  // `inputBytes` of input there (in-place calls).
  void PrepareRecv(size_t bytes, size_t inputAt, size_t inputBytes) {
    std::memset(recv_.data(), kPoison, bytes + kGuardBytes);
    if (inputAt != SIZE_MAX && inputBytes) std::memcpy(recv_.data() + inputAt, input_.data(), inputBytes);
  }

  // ---- the reference ----

  // ref_ = the reduction of n blocks of c elements (block p: rank p's contributions), for every op.
  void ComputeReduced(const TypeDesc& t, const InputModel& m, const uint8_t* blocks, size_t c) {
    const size_t es = t.size;
    const bool isFloat = t.kind == Kind::kFloat;
    for (int op = 0; op < strataNumOps; ++op) {
      const bool exact = !isFloat || op == strataMax || op == strataMin;
      ref_.bits[op].resize(exact ? c * es : 0);
    }
    for (auto* v : {&ref_.sum, &ref_.sumAbs, &ref_.prod}) v->resize(isFloat ? c : 0);
    for (size_t i = 0; i < c; ++i) {
      uint64_t maxBits = Load(blocks + i * es, es), minBits = maxBits;
      if (isFloat) {
        double s = 0, a = 0, p = 1, mx = m.Value(maxBits), mn = mx;
        for (int r = 0; r < n_; ++r) {
          const uint64_t b = Load(blocks + (r * c + i) * es, es);
          const double v = m.Value(b);
          s += v;
          a += std::fabs(v);
          p *= v;
          if (v > mx) mx = v, maxBits = b;
          if (v < mn) mn = v, minBits = b;
        }
        ref_.sum[i] = s, ref_.sumAbs[i] = a, ref_.prod[i] = p;
      } else {
        // Sums and products modulo 2^64 truncate to the same bits as modulo 2^width.
        const bool sign = t.kind == Kind::kSigned;
        uint64_t s = 0, p = 1;
        for (int r = 0; r < n_; ++r) {
          const uint64_t b = Load(blocks + (r * c + i) * es, es);
          const uint64_t v = sign ? static_cast<uint64_t>(SignExtend(b, es)) : b;
          s += v;
          p *= v;
          if (sign ? SignExtend(b, es) > SignExtend(maxBits, es) : b > maxBits) maxBits = b;
          if (sign ? SignExtend(b, es) < SignExtend(minBits, es) : b < minBits) minBits = b;
        }
        s &= m.mask();
        // avg: the wrapped sum divided by nranks, truncated toward zero.
        const uint64_t avg = sign ? static_cast<uint64_t>(SignExtend(s, es) / n_) : s / static_cast<uint64_t>(n_);
        Store(&ref_.bits[strataSum][i * es], s, es);
        Store(&ref_.bits[strataProd][i * es], p, es);
        Store(&ref_.bits[strataAvg][i * es], avg, es);
      }
      Store(&ref_.bits[strataMax][i * es], maxBits, es);
      Store(&ref_.bits[strataMin][i * es], minBits, es);
    }
  }

  // ---- checks ----

  // `got` holds `count` reduced elements, element i being element first + i of every rank's input.
  //
  // Integers: exact, with wraparound; avg is the wrapped sum divided by nranks, truncated toward zero.
  // Floats: max and min are exact (no rounding). Exact elements (see InputModel) are exact for sum and prod,
  // and within one ulp for avg (the exact sum is divided in fp32 and rounded to the type: two roundings).
  // Rounding elements: any order of the n - 1 binary operations (ring, chain, direct) rounds each partial
  // result once to the storage type, with relative error <= eps/2 (eps = 2^-mantissa bits), and every partial
  // sum is at most sum|x_i|, so |sum error| <= (n-1) * eps/2 * sum|x_i| (to first order); n * eps * sum|x_i|
  // covers that with room for the higher-order terms and for the double reference's own rounding (fp64).
  // Products: each of the n - 1 multiplications adds a relative error <= eps/2, so |prod error| <=
  // n * eps * |prod|; inputs are >= 1 in magnitude, so no product is subnormal. avg: the sum's bound divided by
  // n, plus one ulp for the final division and rounding.
  void CheckReduced(CaseCheck& cc, const TypeDesc& t, const InputModel& m, strataRedOp_t op, const uint8_t* got,
                    size_t count, size_t first) {
    const size_t es = t.size;
    if (t.kind != Kind::kFloat || op == strataMax || op == strataMin) {
      const std::vector<uint8_t>& exactBits = ref_.bits[op];
      if (count == 0 || std::memcmp(got, exactBits.data(), count * es) == 0) return;
      for (size_t i = 0; i < count; ++i) {
        const uint64_t bits = Load(got + i * es, es), want = Load(&exactBits[i * es], es);
        if (bits == want) continue;
        if (t.kind == Kind::kFloat)
          cc.FailLazily([&] { return FloatMismatch(t, first + i, bits, m.Value(bits), m.Value(want), 0); });
        else
          cc.FailLazily([&] { return IntMismatch(t, first + i, bits, want); });
      }
      return;
    }
    const ref::FloatFormat& f = *t.format;
    const double eps = ref::Epsilon(f), minSub = ref::MinSubnormal(f), n = n_;
    const auto check = [&](size_t i, double want, double tol) {
      const uint64_t bits = Load(got + i * es, es);
      const double v = m.Value(bits);
      if (!(std::fabs(v - want) <= tol)) cc.FailLazily([&] { return FloatMismatch(t, first + i, bits, v, want, tol); });
    };
    if (op == strataSum) {
      for (size_t i = 0; i < count; ++i)
        check(i, ref_.sum[i], InputModel::ExactElement(first + i) ? 0 : n * eps * ref_.sumAbs[i] + n * minSub);
    } else if (op == strataProd) {
      for (size_t i = 0; i < count; ++i)
        check(i, ref_.prod[i], InputModel::ExactElement(first + i) ? 0 : n * eps * std::fabs(ref_.prod[i]));
    } else {
      for (size_t i = 0; i < count; ++i) {
        const double want = ref_.sum[i] / n;
        // One ulp of want: 2^(exponent - mantissa bits), subnormal spacing below the normal range.
        const int e = (want == 0 ? 1 - f.bias : std::max(std::ilogb(want), 1 - f.bias)) - f.mant_bits;
        const double ulp = e >= -1022 ? Pow2(e) : std::ldexp(1.0, e);
        check(i, want, (InputModel::ExactElement(first + i) ? 0 : eps * ref_.sumAbs[i]) + ulp);
      }
    }
  }

  // `got` must equal `want`, bit for bit: blocks of c elements, block p from rank p (or from rank `src` when
  // given), element i of a block being element first + i of that rank's input.
  void CheckCopy(CaseCheck& cc, const TypeDesc& t, const uint8_t* got, const uint8_t* want, size_t c, size_t first,
                 int src = -1) {
    const size_t total = src >= 0 ? c : n_ * c;
    if (std::memcmp(got, want, total * t.size) == 0) return;
    for (size_t j = 0; j < total; ++j) {
      const uint64_t bits = Load(got + j * t.size, t.size), w = Load(want + j * t.size, t.size);
      if (bits == w) continue;
      cc.FailLazily([&] {
        char msg[200];
        std::snprintf(msg, sizeof(msg),
                      "rank %d index %zu: got 0x%0*" PRIx64 ", want 0x%0*" PRIx64 " (element %zu of rank %d's input)",
                      r_, j, static_cast<int>(2 * t.size), bits, static_cast<int>(2 * t.size), w, first + j % c,
                      src >= 0 ? src : static_cast<int>(j / c));
        return std::string(msg);
      });
    }
  }

  void CheckPoison(CaseCheck& cc, const uint8_t* p, size_t bytes, const char* what) {
    for (size_t i = 0; i < bytes; ++i) {
      if (p[i] == kPoison) continue;
      char msg[200];
      std::snprintf(msg, sizeof(msg), "rank %d: %s was written at byte %zu (0x%02x)", r_, what, i, p[i]);
      cc.Fail(msg);
      return;
    }
  }

  void CheckUnchanged(CaseCheck& cc, const uint8_t* p, const uint8_t* orig, size_t bytes, const char* what) {
    if (bytes == 0 || std::memcmp(p, orig, bytes) == 0) return;
    size_t i = 0;
    while (p[i] == orig[i]) ++i;
    char msg[200];
    std::snprintf(msg, sizeof(msg), "rank %d: %s changed at byte %zu (0x%02x, was 0x%02x)", r_, what, i, p[i], orig[i]);
    cc.Fail(msg);
  }

  std::string IntMismatch(const TypeDesc& t, size_t index, uint64_t got, uint64_t want) const {
    char msg[200];
    if (t.kind == Kind::kSigned)
      std::snprintf(msg, sizeof(msg), "rank %d index %zu: got %" PRId64 ", want %" PRId64, r_, index,
                    SignExtend(got, t.size), SignExtend(want, t.size));
    else
      std::snprintf(msg, sizeof(msg), "rank %d index %zu: got %" PRIu64 ", want %" PRIu64, r_, index, got, want);
    return msg;
  }

  std::string FloatMismatch(const TypeDesc& t, size_t index, uint64_t bits, double got, double want, double tol) const {
    char msg[200];
    std::snprintf(msg, sizeof(msg), "rank %d index %zu: got %.17g (0x%0*" PRIx64 "), want %.17g +- %.3g", r_, index,
                  got, static_cast<int>(2 * t.size), bits, want, tol);
    return msg;
  }

  // ---- bookkeeping ----

  static std::string Name(const char* coll, const TypeDesc& t, const char* op, int root, size_t c, bool inPlace) {
    std::string s = std::string(coll) + " " + t.name;
    if (op) s += std::string(" ") + op;
    if (root >= 0) s += " root " + std::to_string(root);
    return s + " count " + std::to_string(c) + (inPlace ? " in place" : " out of place");
  }

  // A failed call ends the run: the ranks may no longer be in step.
  bool Called(CaseCheck& cc, strataResult_t rc) {
    if (rc == strataSuccess) return true;
    report_ += cc.name + ": returned " + std::to_string(rc) + " (" + strataGetErrorString(rc) +
               "): " + strataGetLastError(comm_) + "\n";
    return false;
  }

  bool Finish(const CaseCheck& cc) {
    if (cc.failures == 0) return true;
    if (++failedCases_ <= kMaxReportedCases)
      report_ += cc.name + ": " + std::to_string(cc.failures) + " mismatch(es)" + cc.lines + "\n";
    return true;
  }

  int r_, n_;
  strataComm_t comm_;
  RawBuffer input_, send_, recv_, gathered_, exchanged_;
  ReducedRef ref_;
  std::string report_;
  int failedCases_ = 0;
};

struct Config {
  const char* name;
  int nranks;
  bool tcp;
  int nodes;
};

void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

class CollectivesMpTest : public ::testing::TestWithParam<Config> {};

TEST_P(CollectivesMpTest, EveryCollectiveTypeOpCountAndPlacement) {
  const Config& c = GetParam();
  MpOptions o;
  o.nranks = c.nranks;
  o.tcp = c.tcp;
  o.nodes = c.nodes;
  o.commTimeoutMs = 30000;  // a rank that stops early makes the others fail in 30 s rather than hang
  const MpResult r =
      RunRanks(o, [](int rank, int nranks, strataComm_t comm) { return RankRunner(rank, nranks, comm).Run(); });
  EXPECT_TRUE(r.ok()) << r.summary();
}

INSTANTIATE_TEST_SUITE_P(Transports, CollectivesMpTest,
                         ::testing::Values(Config{"Shm1", 1, false, 1}, Config{"Shm2", 2, false, 1},
                                           Config{"Shm3", 3, false, 1}, Config{"Shm4", 4, false, 1},
                                           Config{"Shm8", 8, false, 1}, Config{"Tcp2", 2, true, 1},
                                           Config{"Tcp3", 3, true, 1}, Config{"TwoNodes4", 4, false, 2}),
                         [](const ::testing::TestParamInfo<Config>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace test
}  // namespace strata
