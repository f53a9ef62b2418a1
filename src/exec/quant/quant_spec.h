// The quantization spec: what STRATA_QUANT, a communicator's config and a call's strataQuantOptions_t say,
// parsed and checked once; the rule for which calls it applies to; and the sizes the slot planner needs.
// The grammar and the error bounds are in docs/QUANTIZATION.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"
#include "strata/quant_math.h"
#include "strata/strata.h"

namespace strata {

struct QuantSpec {
  bool enabled = false;  // false: the exact path
  math::QuantParams params{math::QuantFormat::kInt8, math::QuantScale::kFp32, math::QuantRounding::kNearest, 128, 0};
};

// Parses `format[:block[:scale[:rounding[:seed]]]]` (or "none"/"off"). Pure: no environment, no logging;
// every malformed input is an strataInvalidArgument error whose message names the field and what it accepts.
Status ParseQuantSpec(const std::string& text, QuantSpec* out);

// A format's name in a spec ("int8", "fp8e4m3"); "?" for a value outside the enum.
const char* QuantFormatName(math::QuantFormat f);
// The canonical text of a spec, every field spelled out ("int8:128:fp32:nearest"); parses back to itself.
std::string QuantSpecString(const QuantSpec& spec);

// Checks field ranges (block size, enum values): specs built from the public struct go through here.
Status ValidateQuantParams(const math::QuantParams& p);

// Only sum and avg of fp32, fp16 and bf16 may be quantized.
bool QuantEligible(strataDataType_t type, strataRedOp_t op);
// The I/O type of an eligible data type; false for the others.
bool QuantIoTypeOf(strataDataType_t type, math::QuantIoType* out);

// Bytes of the encoded form of `count` elements: math::QuantEncodedBytes (strata/quant_math.h).
// The most elements, a whole number of blocks, whose encoding fits in `bytes` (0 if not even one block).
size_t QuantBlockElementsFitting(const math::QuantParams& p, size_t bytes);

// The public options struct and the spec, both ways. A NULL or strataQuantNone struct is the exact path.
Status QuantSpecFromOptions(const strataQuantOptions_t* options, QuantSpec* out);
void QuantOptionsFromSpec(const QuantSpec& spec, strataQuantOptions_t* out);

// Where a spec came from decides what an ineligible call or a small buffer does with it.
enum class QuantSource { kCall, kComm, kEnv };

// The spec a call runs with. An ineligible (type, op) is an error for a spec given per call, and falls back
// to exact (with an INFO line) for one that covers every call (the communicator's config, STRATA_QUANT). Buffers below
// `min_bytes` run exact unless the call itself asked for quantization.
Status ResolveQuantSpec(const QuantSpec& requested, QuantSource source, strataDataType_t type, strataRedOp_t op,
                        size_t bytes, uint64_t min_bytes, QuantSpec* chosen);

// STRATA_QUANT as a spec: disabled when unset; a malformed value is ignored with a WARN line.
QuantSpec QuantSpecFromEnvironment();
// STRATA_QUANT_MIN_BYTES.
uint64_t QuantMinBytesFromEnvironment();

}  // namespace strata
