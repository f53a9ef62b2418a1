// The CUDA quantization kernels (kernels/quant) against the host kernels (src/exec/quant) bit for bit: every
// format, block sizes from 32 to 4096, partial last blocks, every source combination of the fused step,
// fp32/fp16/bf16 I/O, both scale formats, and stochastic rounding (keyed by element index, so the same bits
// on both). The host kernels are themselves checked against a float64 reference (quant_kernels_test).
// Skipped, with a message, where there is no GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "exec/quant/host_quant.h"
#include "quant/quant_kernels.h"

namespace strata {
namespace {

using math::QuantFormat;
using math::QuantIoType;
using math::QuantParams;

bool HaveGpu(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    *why = e != cudaSuccess ? cudaGetErrorString(e) : "no CUDA device";
    return false;
  }
  return true;
}

#define SKIP_WITHOUT_GPU()                                                  \
  do {                                                                      \
    std::string why;                                                        \
    if (!HaveGpu(&why)) GTEST_SKIP() << "no GPU here (" << why << ")";      \
  } while (0)

#define CUDA_OK(expr) ASSERT_EQ(static_cast<int>(expr), 0) << #expr

// `offset` bytes past a 256-byte aligned allocation: a nonzero offset makes the kernels take their
// element-by-element path.
template <typename T>
class DeviceBuf {
 public:
  explicit DeviceBuf(size_t bytes, size_t offset = 0) : bytes_(bytes), offset_(offset) {
    if (bytes_) cudaMalloc(&base_, bytes_ + offset_);
    if (base_) cudaMemset(base_, 0xA5, bytes_ + offset_);  // poison: every byte the kernel must write is compared
  }
  ~DeviceBuf() { cudaFree(base_); }
  T* get() const { return base_ ? reinterpret_cast<T*>(static_cast<uint8_t*>(base_) + offset_) : nullptr; }
  void upload(const void* src) { cudaMemcpy(get(), src, bytes_, cudaMemcpyHostToDevice); }
  std::vector<uint8_t> download() const {
    std::vector<uint8_t> v(bytes_);
    if (bytes_) cudaMemcpy(v.data(), get(), bytes_, cudaMemcpyDeviceToHost);
    return v;
  }

 private:
  void* base_ = nullptr;
  size_t bytes_, offset_;
};

size_t IoWidth(QuantIoType t) { return t == QuantIoType::kFloat32 ? 4 : 2; }

std::vector<uint8_t> IoValues(size_t n, QuantIoType t, std::mt19937* rng) {
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::uniform_real_distribution<float> mag(-3.0f, 3.0f);
  std::vector<uint8_t> out(n * IoWidth(t));
  for (size_t i = 0; i < n; ++i) {
    // A spread of magnitudes block to block, so scales differ.
    const float v = g(*rng) * std::pow(10.0f, mag(*rng));
    math::StoreIo(out.data(), i, t, v);
  }
  return out;
}

const QuantFormat kFormats[] = {QuantFormat::kBf16,    QuantFormat::kFp16, QuantFormat::kFp8E4M3,
                                QuantFormat::kFp8E5M2, QuantFormat::kInt8, QuantFormat::kInt4};

struct Case {
  QuantParams p;
  size_t count;
  bool acc_in, local, in0, in1, acc_out, deq_out;
  QuantIoType io;
  int divisor;
  size_t misalign = 0;  // bytes added to every buffer's address (fp32 and fp16 buffers keep their element
                        // alignment: 2 or 4 are used)
};

std::string Describe(const Case& c) {
  return "format " + std::to_string(static_cast<int>(c.p.format)) + " block " + std::to_string(c.p.block) + " scale " +
         std::to_string(static_cast<int>(c.p.scale)) + " rounding " + std::to_string(static_cast<int>(c.p.rounding)) +
         " count " + std::to_string(c.count) + " sources " + std::to_string(c.acc_in) + std::to_string(c.local) +
         std::to_string(c.in0) + std::to_string(c.in1) + " io " + std::to_string(static_cast<int>(c.io)) + " divisor " +
         std::to_string(c.divisor) + " misalign " + std::to_string(c.misalign);
}

void RunCase(const Case& c, std::mt19937* rng) {
  SCOPED_TRACE(Describe(c));
  const size_t n = c.count, enc = math::QuantEncodedBytes(c.p, n);
  // Host inputs: encoded sources come from quantizing random data on the host.
  std::vector<float> acc(n);
  {
    std::normal_distribution<float> g(0.0f, 2.0f);
    for (float& v : acc) v = g(*rng);
  }
  std::vector<uint8_t> local = IoValues(n, c.io, rng);
  std::vector<uint8_t> in[2];
  for (auto& v : in) {
    std::vector<uint8_t> raw = IoValues(n, QuantIoType::kFloat32, rng);
    v.assign(enc, 0);
    HostQuantize(c.p, raw.data(), QuantIoType::kFloat32, n, 0, v.data());
  }
  const size_t m = c.misalign, m32 = (m + 3) / 4 * 4;
  DeviceBuf<float> d_acc(n * 4, m32), d_acc_out(n * 4, m32);
  DeviceBuf<uint8_t> d_local(local.size(), m), d_in0(enc, m), d_in1(enc, m), d_out(enc, m), d_deq(n * IoWidth(c.io), m);
  d_acc.upload(acc.data());
  d_local.upload(local.data());
  d_in0.upload(in[0].data());
  d_in1.upload(in[1].data());

  std::vector<float> h_acc_out(n);
  std::vector<uint8_t> h_out(enc), h_deq(n * IoWidth(c.io));
  math::QuantStep hs{}, ds{};
  hs.count = ds.count = n;
  hs.index_base = ds.index_base = 1000;
  hs.divisor = ds.divisor = c.divisor;
  hs.local_type = ds.local_type = c.io;
  hs.deq_type = ds.deq_type = c.io;
  if (c.acc_in) hs.acc_in = acc.data(), ds.acc_in = d_acc.get();
  if (c.local) hs.local = local.data(), ds.local = d_local.get();
  if (c.in0) hs.in[0] = in[0].data(), ds.in[0] = d_in0.get();
  if (c.in1) hs.in[1] = in[1].data(), ds.in[1] = d_in1.get();
  if (c.acc_out) hs.acc_out = h_acc_out.data(), ds.acc_out = d_acc_out.get();
  hs.out = h_out.data();
  ds.out = d_out.get();
  if (c.deq_out) hs.deq_out = h_deq.data(), ds.deq_out = d_deq.get();
  HostQuantStep(c.p, hs);
  CUDA_OK(cuda::QuantStepAsync(c.p, ds, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(d_out.download() == h_out) << "encoded bytes differ";
  if (c.deq_out) {
    EXPECT_TRUE(d_deq.download() == h_deq) << "dequantized output differs";
  }
  if (c.acc_out) {
    std::vector<uint8_t> a = d_acc_out.download();
    EXPECT_EQ(std::memcmp(a.data(), h_acc_out.data(), n * 4), 0) << "fp32 partial sums differ";
  }
}

TEST(QuantCuda, FusedStepMatchesHostBitForBit) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(7);
  for (QuantFormat f : kFormats) {
    for (uint32_t block : {32u, 128u, 1024u, 4096u}) {
      for (size_t count : {size_t{1}, size_t{33}, size_t{block} * 3 + 7, size_t{100000}}) {
        for (math::QuantRounding r : {math::QuantRounding::kNearest, math::QuantRounding::kStochastic}) {
          Case c{{f, block % 256 == 0 ? math::QuantScale::kFp16 : math::QuantScale::kFp32, r, block, 99},
                 count, false, true, true, false, false, true, QuantIoType::kFloat32, 1};
          RunCase(c, &rng);
        }
      }
    }
  }
}

// Blocks whose thread groups are not a power of two (96 and 544 elements: 6 and 34 threads of 16 elements),
// and buffers off the 16-byte alignment of the vector path.
TEST(QuantCuda, OddGroupsAndUnalignedBuffers) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  for (QuantFormat f : {QuantFormat::kInt8, QuantFormat::kInt4, QuantFormat::kFp8E4M3, QuantFormat::kBf16}) {
    for (uint32_t block : {96u, 544u, 4096u}) {
      for (size_t count : {size_t{block} * 5 + 19, size_t{block} * 40}) {
        for (size_t misalign : {size_t{0}, size_t{2}, size_t{4}}) {
          Case c{{f, math::QuantScale::kFp32, math::QuantRounding::kNearest, block, 0},
                 count,
                 true,
                 true,
                 true,
                 false,
                 true,
                 true,
                 misalign == 2 ? QuantIoType::kBFloat16 : QuantIoType::kFloat32,
                 1,
                 misalign};
          RunCase(c, &rng);
        }
      }
    }
  }
}

TEST(QuantCuda, EverySourceCombinationAndIoType) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(11);
  for (int mask = 1; mask < 16; ++mask) {
    for (QuantIoType io : {QuantIoType::kFloat32, QuantIoType::kFloat16, QuantIoType::kBFloat16}) {
      Case c{{QuantFormat::kInt8, math::QuantScale::kFp32, math::QuantRounding::kNearest, 128, 0},
             5003, (mask & 1) != 0, (mask & 2) != 0, (mask & 4) != 0, (mask & 8) != 0, true, true, io,
             mask % 3 == 0 ? 4 : 1};
      RunCase(c, &rng);
      c.p.format = QuantFormat::kInt4;
      c.p.block = 32;
      RunCase(c, &rng);
    }
  }
}

// The launches that take a leaner kernel: quantize alone (local -> out, any I/O type), the step (fp32 local +
// in[0] -> out) and dequantize alone (in[0] -> fp32 or bf16), every format, aligned and not.
TEST(QuantCuda, LeanLaunchesMatchHost) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(13);
  for (QuantFormat f : kFormats) {
    for (uint32_t block : {32u, 96u, 128u, 4096u}) {
      for (size_t misalign : {size_t{0}, size_t{4}}) {
        const size_t count = size_t{block} * 9 + 21;
        for (math::QuantRounding r : {math::QuantRounding::kNearest, math::QuantRounding::kStochastic}) {
          const QuantParams p{f, math::QuantScale::kFp32, r, block, 5};
          for (QuantIoType io : {QuantIoType::kFloat32, QuantIoType::kBFloat16}) {
            RunCase(Case{p, count, false, true, false, false, false, false, io, 1, misalign}, &rng);  // quantize
          }
          RunCase(Case{p, count, false, true, true, false, false, false, QuantIoType::kFloat32, 1, misalign}, &rng);
        }
        // Dequantize alone, against the host's.
        const QuantParams p{f, math::QuantScale::kFp32, math::QuantRounding::kNearest, block, 0};
        const size_t enc = math::QuantEncodedBytes(p, count);
        std::vector<uint8_t> raw = IoValues(count, QuantIoType::kFloat32, &rng), h_enc(enc);
        HostQuantize(p, raw.data(), QuantIoType::kFloat32, count, 0, h_enc.data());
        for (QuantIoType io : {QuantIoType::kFloat32, QuantIoType::kBFloat16}) {
          SCOPED_TRACE("dequantize format " + std::to_string(static_cast<int>(f)) + " block " + std::to_string(block) +
                       " io " + std::to_string(static_cast<int>(io)) + " misalign " + std::to_string(misalign));
          std::vector<uint8_t> h_deq(count * IoWidth(io));
          HostDequantize(p, h_enc.data(), count, h_deq.data(), io);
          DeviceBuf<uint8_t> d_enc(enc, misalign), d_deq(count * IoWidth(io), misalign);
          d_enc.upload(h_enc.data());
          CUDA_OK(cuda::DequantizeAsync(p, d_enc.get(), count, d_deq.get(), io, nullptr));
          CUDA_OK(cudaDeviceSynchronize());
          EXPECT_TRUE(d_deq.download() == h_deq) << "dequantized values differ";
        }
      }
    }
  }
}

TEST(QuantCuda, QuantizeAndDequantizeAlone) {
  SKIP_WITHOUT_GPU();
  std::mt19937 rng(3);
  const QuantParams p{QuantFormat::kInt8, math::QuantScale::kFp32, math::QuantRounding::kNearest, 128, 0};
  const size_t n = 1 << 20;
  std::vector<uint8_t> src = IoValues(n, QuantIoType::kBFloat16, &rng);
  const size_t enc = math::QuantEncodedBytes(p, n);
  std::vector<uint8_t> h_enc(enc), h_deq(n * 2);
  HostQuantize(p, src.data(), QuantIoType::kBFloat16, n, 0, h_enc.data());
  HostDequantize(p, h_enc.data(), n, h_deq.data(), QuantIoType::kBFloat16);
  DeviceBuf<uint8_t> d_src(n * 2), d_enc(enc), d_deq(n * 2);
  d_src.upload(src.data());
  CUDA_OK(cuda::QuantizeAsync(p, d_src.get(), QuantIoType::kBFloat16, n, 0, d_enc.get(), nullptr));
  CUDA_OK(cuda::DequantizeAsync(p, d_enc.get(), n, d_deq.get(), QuantIoType::kBFloat16, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(d_enc.download() == h_enc);
  EXPECT_TRUE(d_deq.download() == h_deq);
}

}  // namespace
}  // namespace strata
