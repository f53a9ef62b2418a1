// libFuzzer target: the config values read from the environment or a launcher that are not specs of
// their own: byte sizes (ParseBytes: STRATA_*_BYTES knobs), CPU lists (ParseCpuList: topology files and
// STRATA_BIND's report) and the 128-byte unique id that travels out of band (DecodeUniqueId).
// Byte 0 picks the parser; the rest is its input.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/bootstrap.h"
#include "core/config.h"
#include "topology/cpu_list.h"

namespace {

// An independent reading of the byte-size grammar: digits, then K/M/G (powers of two), then an optional
// B; false when anything else is there or the value does not fit in 64 bits.
bool ReferenceBytes(const std::string& s, uint64_t* out) {
  size_t i = 0;
  unsigned __int128 x = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    x = x * 10 + static_cast<unsigned>(s[i] - '0');
    if (x > UINT64_MAX) return false;
    ++i;
  }
  if (i == 0) return false;
  int shift = 0;
  if (i < s.size() && (s[i] == 'K' || s[i] == 'k')) shift = 10, ++i;
  else if (i < s.size() && (s[i] == 'M' || s[i] == 'm')) shift = 20, ++i;
  else if (i < s.size() && (s[i] == 'G' || s[i] == 'g')) shift = 30, ++i;
  if (i < s.size() && (s[i] == 'B' || s[i] == 'b')) ++i;
  if (i != s.size()) return false;
  x <<= shift;
  if (x > UINT64_MAX) return false;
  *out = static_cast<uint64_t>(x);
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: {
      uint64_t got = 0, want = 0;
      const bool ok = strata::ParseBytes(text, &got);
      if (ok != ReferenceBytes(text, &want)) __builtin_trap();
      if (ok && got != want) __builtin_trap();
      break;
    }
    case 1: {
      std::vector<int> cpus;
      std::string err;
      if (!strata::ParseCpuList(text, &cpus, &err)) {
        if (err.empty()) __builtin_trap();
        break;
      }
      for (size_t i = 0; i < cpus.size(); ++i)
        if (cpus[i] < 0 || cpus[i] > strata::kMaxCpuIndex || (i > 0 && cpus[i] <= cpus[i - 1])) __builtin_trap();
      // The canonical text reads back as the same list.
      std::vector<int> again;
      if (!strata::ParseCpuList(strata::FormatCpuList(cpus), &again, &err) || again != cpus) __builtin_trap();
      break;
    }
    default: {
      strataUniqueId id;
      memset(&id, 0, sizeof(id));
      memcpy(&id, data + 1, size - 1 < sizeof(id) ? size - 1 : sizeof(id));
      strata::UniqueIdData decoded;
      const strata::Status st = strata::DecodeUniqueId(id, &decoded);
      if (st.ok() != (decoded.magic == strata::kUniqueIdMagic)) __builtin_trap();
      if (!st.ok() && st.code() != strataInvalidArgument) __builtin_trap();
      break;
    }
  }
  return 0;
}
