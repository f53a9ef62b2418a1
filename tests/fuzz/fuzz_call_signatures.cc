// libFuzzer target: STRATA_CHECK_CALLS compares call signatures that arrive from every peer
// (CompareSignatures); any bytes there must give a verdict, never a crash or an unbounded message.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/call_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t n = size / sizeof(strata::CallSignature);
  if (n == 0 || n > 64) return 0;
  std::vector<strata::CallSignature> all(n);
  memcpy(all.data(), data, n * sizeof(strata::CallSignature));
  // Half the inputs carry the right magic, so the comparison itself is reached.
  if (data[0] & 1)
    for (auto& s : all) s.magic = strata::kCallSignatureMagic;
  const strata::Status st = strata::CompareSignatures(all);
  const bool same = std::all_of(all.begin(), all.end(), [&](const strata::CallSignature& s) {
    return memcmp(&s, &all[0], sizeof(s)) == 0;
  });
  if (same && all[0].magic == strata::kCallSignatureMagic && !st.ok()) __builtin_trap();  // identical calls agree
  return 0;
}
