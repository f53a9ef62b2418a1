// libFuzzer target: STRATA_QUANT and the config's quantization string (ParseQuantSpec). An accepted spec
// must pass the range checks, and its canonical text must parse back to itself; a refused one is
// strataInvalidArgument with a reason.
#include <cstddef>
#include <cstdint>
#include <string>

#include "exec/quant/quant_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  strata::QuantSpec spec;
  const strata::Status st = strata::ParseQuantSpec(text, &spec);
  if (!st.ok()) {
    if (st.code() != strataInvalidArgument || st.message().empty()) __builtin_trap();
    return 0;
  }
  if (!spec.enabled) return 0;
  if (!strata::ValidateQuantParams(spec.params).ok()) __builtin_trap();
  const std::string canonical = strata::QuantSpecString(spec);
  strata::QuantSpec again;
  if (!strata::ParseQuantSpec(canonical, &again).ok() || !again.enabled) __builtin_trap();
  if (strata::QuantSpecString(again) != canonical) __builtin_trap();
  // The public struct round trip the API uses.
  strataQuantOptions_t options;
  strata::QuantOptionsFromSpec(spec, &options);
  strata::QuantSpec fromOptions;
  if (!strata::QuantSpecFromOptions(&options, &fromOptions).ok()) __builtin_trap();
  if (strata::QuantSpecString(fromOptions) != canonical) __builtin_trap();
  return 0;
}
