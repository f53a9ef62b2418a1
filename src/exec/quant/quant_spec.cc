#include "exec/quant/quant_spec.h"

#include <cinttypes>
#include <cstdio>
#include <vector>

#include "core/config.h"
#include "core/log.h"

namespace strata {
namespace {

using math::QuantFormat;
using math::QuantRounding;
using math::QuantScale;

// Longer input is rejected before it is looked at: no valid spec comes near this.
constexpr size_t kMaxSpecLength = 64;

struct FormatName {
  const char* name;
  QuantFormat format;
};
constexpr FormatName kFormats[] = {
    {"bf16", QuantFormat::kBf16},       {"fp16", QuantFormat::kFp16}, {"fp8e4m3", QuantFormat::kFp8E4M3},
    {"fp8e5m2", QuantFormat::kFp8E5M2}, {"int8", QuantFormat::kInt8}, {"int4", QuantFormat::kInt4},
};

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// Decimal without sign; false on overflow past `max`.
bool ParseUnsigned(const std::string& s, uint64_t max, uint64_t* out) {
  uint64_t v = 0;
  for (char c : s) {
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (max - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

Status SpecError(const char* fmt, const std::string& field) {
  return MakeError(strataInvalidArgument, fmt, field.c_str());
}

}  // namespace

Status ParseQuantSpec(const std::string& text, QuantSpec* out) {
  STRATA_REQUIRE(!text.empty(), strataInvalidArgument, "quantization spec: empty");
  STRATA_REQUIRE(text.size() <= kMaxSpecLength, strataInvalidArgument,
                 "quantization spec: %zu characters, longer than any valid spec (%zu)", text.size(), kMaxSpecLength);
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == ':';
    STRATA_REQUIRE(ok, strataInvalidArgument,
                   "quantization spec: character 0x%02x at position %zu (only lowercase letters, digits and ':')", c,
                   i);
  }
  std::vector<std::string> fields(1);
  for (char c : text) {
    if (c == ':') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  for (size_t i = 0; i < fields.size(); ++i) {
    STRATA_REQUIRE(!fields[i].empty(), strataInvalidArgument, "quantization spec '%s': field %zu is empty",
                   text.c_str(), i + 1);
  }
  QuantSpec spec;
  if (fields[0] == "none" || fields[0] == "off") {
    STRATA_REQUIRE(fields.size() == 1, strataInvalidArgument,
                   "quantization spec '%s': '%s' takes no further fields", text.c_str(), fields[0].c_str());
    *out = QuantSpec{};
    return Status::Ok();
  }
  STRATA_REQUIRE(fields.size() <= 5, strataInvalidArgument,
                 "quantization spec '%s': %zu fields, at most 5 (format:block:scale:rounding:seed)", text.c_str(),
                 fields.size());

  bool known = false;
  for (const FormatName& n : kFormats) {
    if (fields[0] == n.name) {
      spec.params.format = n.format;
      known = true;
    }
  }
  if (!known) {
    return SpecError("quantization spec: unknown format '%s' (bf16, fp16, fp8e4m3, fp8e5m2, int8 or int4)",
                     fields[0]);
  }
  if (fields.size() > 1) {
    uint64_t block = 0;
    if (!AllDigits(fields[1]) || !ParseUnsigned(fields[1], UINT32_MAX, &block) || block < math::kQuantMinBlock ||
        block > math::kQuantMaxBlock || block % math::kQuantBlockMultiple != 0) {
      return SpecError("quantization spec: block size '%s' is not a multiple of 32 from 32 to 4096", fields[1]);
    }
    spec.params.block = static_cast<uint32_t>(block);
  }
  if (fields.size() > 2) {
    if (fields[2] == "fp32") {
      spec.params.scale = QuantScale::kFp32;
    } else if (fields[2] == "fp16") {
      spec.params.scale = QuantScale::kFp16;
    } else {
      return SpecError("quantization spec: scale format '%s' (fp32 or fp16)", fields[2]);
    }
  }
  if (fields.size() > 3) {
    if (fields[3] == "nearest") {
      spec.params.rounding = QuantRounding::kNearest;
    } else if (fields[3] == "stochastic") {
      spec.params.rounding = QuantRounding::kStochastic;
    } else {
      return SpecError("quantization spec: rounding '%s' (nearest or stochastic)", fields[3]);
    }
  }
  if (fields.size() > 4) {
    if (spec.params.rounding != QuantRounding::kStochastic) {
      return SpecError("quantization spec: seed '%s' given with nearest rounding (only stochastic takes one)",
                       fields[4]);
    }
    uint64_t seed = 0;
    if (!AllDigits(fields[4]) || !ParseUnsigned(fields[4], UINT64_MAX, &seed)) {
      return SpecError("quantization spec: seed '%s' is not a decimal number below 2^64", fields[4]);
    }
    spec.params.seed = seed;
  }
  spec.enabled = true;
  *out = spec;
  return Status::Ok();
}

const char* QuantFormatName(math::QuantFormat f) {
  for (const FormatName& n : kFormats)
    if (n.format == f) return n.name;
  return "?";
}

std::string QuantSpecString(const QuantSpec& spec) {
  if (!spec.enabled) return "none";
  const math::QuantParams& p = spec.params;
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%s:%u:%s:%s", QuantFormatName(p.format), p.block,
                p.scale == QuantScale::kFp16 ? "fp16" : "fp32",
                p.rounding == QuantRounding::kStochastic ? "stochastic" : "nearest");
  std::string s = buf;
  if (p.rounding == QuantRounding::kStochastic) s += ":" + std::to_string(p.seed);
  return s;
}

Status ValidateQuantParams(const math::QuantParams& p) {
  STRATA_REQUIRE(static_cast<int>(p.format) < math::kNumQuantFormats,
                 strataInvalidArgument, "quantization: format %d unknown", static_cast<int>(p.format));
  STRATA_REQUIRE(p.block >= math::kQuantMinBlock && p.block <= math::kQuantMaxBlock &&
                     p.block % math::kQuantBlockMultiple == 0,
                 strataInvalidArgument, "quantization: block size %u is not a multiple of 32 from 32 to 4096",
                 p.block);
  STRATA_REQUIRE(p.scale == QuantScale::kFp32 || p.scale == QuantScale::kFp16, strataInvalidArgument,
                 "quantization: scale format %d unknown", static_cast<int>(p.scale));
  STRATA_REQUIRE(p.rounding == QuantRounding::kNearest || p.rounding == QuantRounding::kStochastic,
                 strataInvalidArgument, "quantization: rounding %d unknown", static_cast<int>(p.rounding));
  return Status::Ok();
}

bool QuantEligible(strataDataType_t type, strataRedOp_t op) {
  math::QuantIoType io;
  return (op == strataSum || op == strataAvg) && QuantIoTypeOf(type, &io);
}

bool QuantIoTypeOf(strataDataType_t type, math::QuantIoType* out) {
  switch (type) {
    case strataFloat32:
      *out = math::QuantIoType::kFloat32;
      return true;
    case strataFloat16:
      *out = math::QuantIoType::kFloat16;
      return true;
    case strataBfloat16:
      *out = math::QuantIoType::kBFloat16;
      return true;
    default:
      return false;
  }
}

size_t QuantBlockElementsFitting(const math::QuantParams& p, size_t bytes) {
  // Encoded size grows with the block count, so search the block count (the answer is near bytes / block).
  const size_t per_block = math::QuantEncodedBytes(p, p.block);
  size_t hi = bytes / (per_block > math::kQuantValuesAlign ? per_block - math::kQuantValuesAlign : 1) + 1;
  size_t lo = 0;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo + 1) / 2;
    if (math::QuantEncodedBytes(p, mid * p.block) <= bytes) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo * p.block;
}

Status QuantSpecFromOptions(const strataQuantOptions_t* options, QuantSpec* out) {
  QuantSpec spec;
  if (options == nullptr) {
    *out = spec;
    return Status::Ok();
  }
  STRATA_REQUIRE(options->magic == STRATA_QUANT_OPTIONS_MAGIC, strataInvalidArgument,
                 "quantization options: bad magic 0x%x (initialize with STRATA_QUANT_OPTIONS_INITIALIZER)",
                 options->magic);
  STRATA_REQUIRE(options->size >= sizeof(strataQuantOptions_t), strataInvalidArgument,
                 "quantization options: size %zu is smaller than version 1's %zu", options->size,
                 sizeof(strataQuantOptions_t));
  if (options->format == strataQuantNone) {
    *out = spec;
    return Status::Ok();
  }
  STRATA_REQUIRE(options->format > strataQuantNone && options->format < strataQuantNumFormats, strataInvalidArgument,
                 "quantization options: format %d unknown", options->format);
  STRATA_REQUIRE(options->blockSize > 0, strataInvalidArgument, "quantization options: block size %d",
                 options->blockSize);
  spec.params.format = static_cast<QuantFormat>(options->format - 1);
  spec.params.block = static_cast<uint32_t>(options->blockSize);
  spec.params.scale = static_cast<QuantScale>(options->scaleFormat);
  spec.params.rounding = static_cast<QuantRounding>(options->rounding);
  spec.params.seed = options->seed;
  STRATA_REQUIRE(options->scaleFormat == strataQuantScaleFp32 || options->scaleFormat == strataQuantScaleFp16,
                 strataInvalidArgument, "quantization options: scale format %d unknown", options->scaleFormat);
  STRATA_REQUIRE(options->rounding == strataQuantRoundNearest || options->rounding == strataQuantRoundStochastic,
                 strataInvalidArgument, "quantization options: rounding %d unknown", options->rounding);
  STRATA_CHECK(ValidateQuantParams(spec.params));
  spec.enabled = true;
  *out = spec;
  return Status::Ok();
}

void QuantOptionsFromSpec(const QuantSpec& spec, strataQuantOptions_t* out) {
  *out = strataQuantOptions_t STRATA_QUANT_OPTIONS_INITIALIZER;
  if (!spec.enabled) return;
  out->format = static_cast<int>(spec.params.format) + 1;
  out->blockSize = static_cast<int>(spec.params.block);
  out->scaleFormat = static_cast<int>(spec.params.scale);
  out->rounding = static_cast<int>(spec.params.rounding);
  out->seed = spec.params.seed;
}

Status ResolveQuantSpec(const QuantSpec& requested, QuantSource source, strataDataType_t type, strataRedOp_t op,
                        size_t bytes, uint64_t min_bytes, QuantSpec* chosen) {
  *chosen = QuantSpec{};
  if (!requested.enabled) return Status::Ok();
  if (!QuantEligible(type, op)) {
    if (source != QuantSource::kCall) {
      STRATA_LOG(INFO, COLL, "%s ignored for datatype %d op %d: only sum and avg of fp32/fp16/bf16",
                 source == QuantSource::kEnv ? "STRATA_QUANT" : "the communicator's quantization spec",
                 static_cast<int>(type), static_cast<int>(op));
      return Status::Ok();
    }
    return MakeError(strataInvalidArgument,
                     "quantization %s requested for datatype %d op %d: only sum and avg of fp32, fp16 and bf16",
                     QuantSpecString(requested).c_str(), static_cast<int>(type), static_cast<int>(op));
  }
  if (source != QuantSource::kCall && bytes < min_bytes) return Status::Ok();
  *chosen = requested;
  return Status::Ok();
}

QuantSpec QuantSpecFromEnvironment() {
  QuantSpec spec;
  if (!ConfigIsSet("STRATA_QUANT")) return spec;
  const std::string text = ConfigString("STRATA_QUANT");
  const Status st = ParseQuantSpec(text, &spec);
  if (!st.ok()) {
    STRATA_LOG(WARN, ENV, "STRATA_QUANT ignored: %s", st.message().c_str());
    return QuantSpec{};
  }
  return spec;
}

uint64_t QuantMinBytesFromEnvironment() { return ConfigBytes("STRATA_QUANT_MIN_BYTES"); }

}  // namespace strata
