// Quantized plans: the plan form of the quantized collectives (docs/QUANTIZATION.md) and their generators.
//
// A quantized plan moves encoded bytes (strata/quant_math.h layout) through the same slot FIFOs as exact
// plans, but its steps need more than an exact Step says (an fp32 accumulator, an encoded buffer, a stream
// for stochastic rounding), so it is a plan type of its own, run by QuantPlanRun (src/exec/quant). The
// algorithms keep the error flat in the number of ranks:
//   qdirect: each rank sends each owner its block once (quantized); the owner accumulates in fp32,
//            quantizes the reduced chunk once, and every rank, the owner included, dequantizes those bytes;
//   qhier:   an exact fp32 reduce-scatter within each host, then qdirect between the ranks with the same
//            local index on every host; the owner's encoded chunk is forwarded, still encoded, within hosts.
// Data is quantized at most twice on its way to the result, and all ranks end bit-identical.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "strata/quant_math.h"

namespace strata {

// Buffers a quantized plan is bound to: the caller's send and receive buffers (I/O type), an fp32
// accumulator and a byte buffer of encoded ranges. Offsets are in elements, except into kQEncBuf, where a
// step names the byte offset of its range (QStep::encByte).
enum : uint16_t { kQSendBuf = 0, kQRecvBuf = 1, kQAccBuf = 2, kQEncBuf = 3 };
constexpr int kQNumBufs = 4;

enum class QStepOp : uint8_t {
  SendQuant,  // out = quantize(src)                              src: send (io type) or acc (fp32)
  SendRaw,    // out = src as fp32 (exact)                         src: send or acc
  RecvAccum,  // acc[dst] = first ? src + in : acc[dst] + in      in: encoded, or fp32 when `raw`
  Finish,     // allreduce/allgather: enc[dst] = quantize(src (/ divisor)); recv[dst] = dequantize(enc[dst])
              // reduce-scatter (`exact`): recv[dst] = src (/ divisor), no quantization
  SendEnc,    // out = enc[src] (encoded bytes, as they are)
  RecvEnc,    // enc[dst] = in (when `store`); recv[dst] = dequantize(in) (when `deq`)
};
const char* QStepOpName(QStepOp op);

struct QRef {
  uint16_t buf = 0;
  uint64_t offset = 0;  // elements
};

struct QStep {
  QStepOp op = QStepOp::SendQuant;
  int32_t recvPeer = -1;
  int32_t sendPeer = -1;
  QRef src;
  QRef dst;
  uint64_t count = 0;
  // Byte offset in kQEncBuf of the range's encoding: piece k at encByte + k * QuantEncodedBytes(piece).
  uint64_t encByte = 0;
  // Tensor index of element 0 of the range: keys stochastic rounding, with `stream`.
  uint64_t index = 0;
  uint32_t stream = 0;   // who quantizes at which stage: picks the random bits' seed
  bool first = false;    // RecvAccum: src is the local contribution, the accumulator starts from it
  bool raw = false;      // RecvAccum: the incoming pieces are exact fp32, not encoded
  bool divide = false;   // Finish: divide by the plan's divisor (avg)
  bool exact = false;    // Finish: write the fp32 sum as it is (reduce-scatter's own result)
  bool store = false;    // RecvEnc: keep the encoded bytes (to forward them)
  bool deq = false;      // RecvEnc: dequantize into recv
  // The step starts once queue `waitQueue` of the plan has done `waitSteps` steps (-1: no wait): a send of
  // what another queue of this rank produces.
  int32_t waitQueue = -1;
  uint32_t waitSteps = 0;
};

struct QPlanQueue {
  int channel = 0;
  std::vector<QStep> steps;
};

struct QuantPlan {
  std::string algorithm;  // "qdirect" or "qhier"
  CollKind kind = CollKind::AllReduce;
  strataDataType_t dtype = strataFloat32;  // fp32, fp16 or bf16
  int divisor = 1;                         // avg: the rank count
  math::QuantParams params{};
  size_t slotBytes = 0;  // the geometry's: both ends of a connection cut pieces from it
  uint64_t accElems = 0;  // fp32 elements of the accumulator
  uint64_t encBytes = 0;  // bytes of the encoded buffer
  std::vector<QPlanQueue> queues;

  QPlanQueue& addQueue(int channel) {
    queues.push_back(QPlanQueue{channel, {}});
    return queues.back();
  }
  std::string toJson() const;
};

// How pieces and encoded buffers are cut; the same on every rank.
// Elements per slot piece of an encoded range: whole blocks whose encoding fits a slot.
uint64_t QuantPieceElems(const math::QuantParams& p, size_t slotBytes);
// Elements per slot piece of an exact fp32 range.
inline uint64_t RawPieceElems(size_t slotBytes) { return slotBytes / sizeof(float); }
// Bytes of a range of `count` elements encoded piece by piece (pieces of `piece` elements, the last shorter).
uint64_t QuantEncRangeBytes(const math::QuantParams& p, uint64_t piece, uint64_t count);

enum class QuantAlgo : uint8_t { Direct, Hier };
const char* QuantAlgoName(QuantAlgo a);
bool QuantAlgoByName(const std::string& name, QuantAlgo* out);

// Quantized collectives served: allreduce, reduce-scatter, allgather (sum/avg of fp32, fp16, bf16 for the
// reducing ones; the caller checks eligibility with QuantEligible).
bool QuantAlgoServes(CollKind kind);

// This rank's plan. Hier on a shape it does not fit (one host, hosts of unequal or single-rank size, or a
// collective other than allreduce) runs qdirect; the plan's `algorithm` names what runs.
QuantPlan BuildQuantPlan(QuantAlgo algo, const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p);
QuantPlan QDirectPlan(const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p);
QuantPlan QHierAllReducePlan(const CollDesc& desc, const PlanGeometry& geo, const math::QuantParams& p);

}  // namespace strata
