#include "core/call_check.h"

#include <functional>
#include <map>

namespace strata {

const char* DataTypeName(int t) {
  static const char* const kNames[] = {"int8",    "uint8",   "int32", "uint32",   "int64",    "uint64",
                                       "float16", "float32", "float64", "bfloat16", "fp8e4m3", "fp8e5m2"};
  return t >= 0 && t < strataNumTypes ? kNames[t] : "unknown-type";
}
const char* DataTypeName(strataDataType_t t) { return DataTypeName(static_cast<int>(t)); }

const char* RedOpName(int op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < strataNumOps ? kNames[op] : "unknown-op";
}
const char* RedOpName(strataRedOp_t op) { return RedOpName(static_cast<int>(op)); }

std::string DescribeCall(const CollDesc& d) {
  std::string s = std::string(CollKindName(d.kind)) + " of " + std::to_string(d.count) + " x " + DataTypeName(d.dtype);
  const bool reduces = d.kind == CollKind::AllReduce || d.kind == CollKind::Reduce || d.kind == CollKind::ReduceScatter;
  if (reduces) s += std::string(" (") + RedOpName(d.op) + ")";
  if (d.kind == CollKind::Broadcast || d.kind == CollKind::Reduce) s += " root " + std::to_string(d.root);
  return s;
}

CallSignature MakeSignature(const CollDesc& desc, uint32_t seq, const QuantSpec& quant) {
  CallSignature s{};
  if (quant.enabled) {
    const math::QuantParams& p = quant.params;
    s.quantFormat = static_cast<uint8_t>(1 + static_cast<int>(p.format));
    s.quantBlock = static_cast<uint16_t>(p.block);
    s.quantScale = math::QuantHasScale(p.format) ? static_cast<uint8_t>(p.scale) : 0;
  }
  s.magic = kCallSignatureMagic;
  s.seq = seq;
  s.kind = static_cast<uint8_t>(desc.kind);
  s.dtype = static_cast<uint8_t>(desc.dtype);
  s.op = static_cast<uint8_t>(desc.op);
  s.root = desc.root;
  s.count = desc.count;
  return s;
}

namespace {
// "none", "bf16:128", "int8:128:fp32": what decides how a quantized call's bytes are read; any wire bytes.
std::string QuantShown(const CallSignature& s) {
  if (s.quantFormat == 0) return "none";
  const int format = s.quantFormat - 1;
  if (format >= math::kNumQuantFormats) return "unknown-quantization-" + std::to_string(s.quantFormat);
  const auto f = static_cast<math::QuantFormat>(format);
  const std::string out = std::string(QuantFormatName(f)) + ":" + std::to_string(s.quantBlock);
  if (!math::QuantHasScale(f)) return out;
  return out + (s.quantScale == static_cast<uint8_t>(math::QuantScale::kFp32)   ? ":fp32"
                : s.quantScale == static_cast<uint8_t>(math::QuantScale::kFp16) ? ":fp16"
                                                                                : ":unknown-scale");
}

struct Field {
  const char* name;
  std::function<std::string(const CallSignature&)> show;
};

// "ranks 0,1,3 passed float32; rank 2 passed int32"
std::string WhoPassedWhat(const std::vector<CallSignature>& all, const Field& f) {
  std::map<std::string, std::vector<int>> byValue;
  for (size_t r = 0; r < all.size(); ++r) byValue[f.show(all[r])].push_back(static_cast<int>(r));
  std::string out;
  for (const auto& v : byValue) {
    if (!out.empty()) out += "; ";
    out += v.second.size() == 1 ? "rank " : "ranks ";
    for (size_t i = 0; i < v.second.size(); ++i) out += (i ? "," : "") + std::to_string(v.second[i]);
    out += " passed " + v.first;
  }
  return out;
}
}  // namespace

Status CompareSignatures(const std::vector<CallSignature>& all) {
  for (size_t r = 0; r < all.size(); ++r)
    STRATA_REQUIRE(all[r].magic == kCallSignatureMagic, strataInvalidUsage,
                   "STRATA_CHECK_CALLS: rank %zu sent no call signature (is STRATA_CHECK_CALLS=1 on every rank?)", r);
  const Field fields[] = {
      {"collective", [](const CallSignature& s) { return std::string(CollKindName(static_cast<CollKind>(s.kind))); }},
      {"count", [](const CallSignature& s) { return std::to_string(s.count); }},
      // Wire bytes stay integers: a byte outside the enums is no value of their types.
      {"datatype", [](const CallSignature& s) { return std::string(DataTypeName(static_cast<int>(s.dtype))); }},
      {"op", [](const CallSignature& s) { return std::string(RedOpName(static_cast<int>(s.op))); }},
      {"root", [](const CallSignature& s) { return std::to_string(s.root); }},
      {"quantization", QuantShown},
      {"call number", [](const CallSignature& s) { return "call #" + std::to_string(s.seq); }},
  };
  std::string msg;
  for (const Field& f : fields) {
    bool differs = false;
    for (const CallSignature& s : all) differs = differs || f.show(s) != f.show(all[0]);
    if (!differs) continue;
    if (!msg.empty()) msg += "; and ";
    msg += std::string("ranks disagree on the ") + f.name + ": " + WhoPassedWhat(all, f);
  }
  if (msg.empty()) return Status::Ok();
  return MakeError(strataInvalidUsage, "STRATA_CHECK_CALLS: %s", msg.c_str());
}

}  // namespace strata
