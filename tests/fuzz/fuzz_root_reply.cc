// libFuzzer target: the bootstrap root's reply as a rank checks it (CheckRootReply), including the error
// message that lists the ranks that never joined. Byte 0: when odd, the proof is fixed up so that the
// fuzzer reaches the verdicts; byte 1: the rank count the rank expects.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/bootstrap.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  static const uint8_t kSecret[strata::kSecretBytes] = {15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  strata::AuthHello hello{};
  hello.magic = strata::kAuthMagic;
  hello.nonce[0] = 42;
  const int nranks = 1 + data[1];
  uint8_t buf[512];
  const size_t n = size - 2 < sizeof(buf) ? size - 2 : sizeof(buf);
  memcpy(buf, data + 2, n);
  if ((data[0] & 1) && n == sizeof(strata::RootReply)) {
    const uint64_t proof = strata::AuthReplyMac(kSecret, hello);
    memcpy(buf + offsetof(strata::RootReply, proof), &proof, sizeof(proof));
  }
  const strata::Status st = strata::CheckRootReply(buf, n, kSecret, hello, 0, nranks);
  if (!st.ok() && st.message().empty()) __builtin_trap();  // every refusal explains itself
  return 0;
}
