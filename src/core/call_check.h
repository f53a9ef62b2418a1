// Call checking (STRATA_CHECK_CALLS=1): before each collective, ranks exchange a small signature
// of the call (sequence number, collective, count, datatype, op, root, quantization) and refuse to run it when
// they disagree, so that a mismatch is an error naming the ranks and the field, not a hang or
// wrong data. Also the names used in error messages.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "algorithms/collective.h"
#include "core/status.h"
#include "exec/quant/quant_spec.h"

namespace strata {

const char* DataTypeName(strataDataType_t t);
const char* RedOpName(strataRedOp_t op);
// The same for a number read from the wire, which may lie outside the enums.
const char* DataTypeName(int t);
const char* RedOpName(int op);
// "AllReduce of 1000 x float32 (sum)", "Broadcast of 8 x int32 from root 2".
std::string DescribeCall(const CollDesc& desc);

// What every rank sends before a checked call; fixed size on the wire.
struct CallSignature {
  uint32_t magic;
  uint32_t seq;  // calls checked so far on this communicator: catches a rank that skipped one
  uint8_t kind, dtype, op;
  uint8_t quantFormat;  // the encoding the call runs with: 0 exact, else 1 + math::QuantFormat
  int32_t root;
  uint64_t count;
  uint16_t quantBlock;  // elements per block of a quantized call (0: exact)
  uint8_t quantScale;   // math::QuantScale of a format that carries a scale, else 0
  uint8_t pad[5];
};
constexpr uint32_t kCallSignatureMagic = 0x53544343;  // "STCC"

// `quant`: the encoding the call runs with, as this rank resolved it (how its bytes are decoded: the format, the
// block size and the scale format, not the rounding).
CallSignature MakeSignature(const CollDesc& desc, uint32_t seq, const QuantSpec& quant = QuantSpec{});
// All ranks' signatures, indexed by rank: strataInvalidUsage naming each field the ranks disagree
// on and which ranks passed which value; Ok when they agree. Every rank gets the same verdict.
Status CompareSignatures(const std::vector<CallSignature>& all);

}  // namespace strata
