// libFuzzer target: the handshake every bootstrap and TCP connection opens with, as the accepting side
// checks it (VerifyAuthHello). Input byte 0 picks the purpose and, when odd, re-signs the rest with the
// test secret, so the fuzzer also reaches everything behind the MAC check.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "transport/net/auth.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const uint8_t kSecret[strata::kSecretBytes] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const auto purpose = static_cast<strata::AuthPurpose>(1 + (data[0] >> 1) % 3);
  uint8_t buf[256];
  const size_t n = size - 1 < sizeof(buf) ? size - 1 : sizeof(buf);
  memcpy(buf, data + 1, n);
  if ((data[0] & 1) && n == sizeof(strata::AuthHello)) {
    const uint64_t mac = strata::SipHash24(kSecret, buf, offsetof(strata::AuthHello, mac));
    memcpy(buf + offsetof(strata::AuthHello, mac), &mac, sizeof(mac));
  }
  strata::AuthHello out;
  const strata::Status st = strata::VerifyAuthHello(buf, n, kSecret, purpose, &out);
  // A hello that verifies must carry exactly what was sent.
  if (st.ok() && memcmp(&out, buf, sizeof(out)) != 0) __builtin_trap();
  return 0;
}
