// libFuzzer target: STRATA_ALGO and the config field `algorithm` (ParseAlgoSpec). An accepted spec must
// have a canonical form that parses back to the same table; a refused one is strataInvalidArgument with
// a reason and leaves the output untouched.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "algorithms/algo_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  strata::ForcedAlgos forced;
  forced.algo[0] = 3;  // a refusal must leave this alone
  const strata::Status st = strata::ParseAlgoSpec(text, &forced);
  if (!st.ok()) {
    if (st.code() != strataInvalidArgument || st.message().empty() || forced.algo[0] != 3) __builtin_trap();
    return 0;
  }
  const std::string canonical = forced.toString();
  strata::ForcedAlgos again;
  if (!strata::ParseAlgoSpec(canonical, &again).ok()) __builtin_trap();
  if (memcmp(again.algo, forced.algo, sizeof(forced.algo)) != 0) __builtin_trap();
  if (again.toString() != canonical) __builtin_trap();
  return 0;
}
