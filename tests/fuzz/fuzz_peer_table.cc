// libFuzzer target: the peer table a rank receives from the bootstrap root (CheckPeerTable), which the
// communicator then reads as C strings and numbers. Up to 8 PeerInfo records; a table that passes must
// have every entry in rank order and every string terminated inside its array.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/bootstrap.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const size_t n = size / sizeof(strata::PeerInfo);
  if (n == 0 || n > 8) return 0;
  std::vector<strata::PeerInfo> all(n);
  memcpy(all.data(), data, n * sizeof(strata::PeerInfo));
  // Half the inputs carry the right ranks, so the string checks are reached.
  if (data[0] & 1)
    for (size_t r = 0; r < n; ++r) all[r].rank = static_cast<int32_t>(r);
  const strata::Status st = strata::CheckPeerTable(all.data(), static_cast<int>(n));
  if (!st.ok()) {
    if (st.code() != strataRemoteError || st.message().empty()) __builtin_trap();
    return 0;
  }
  for (size_t r = 0; r < n; ++r) {
    const strata::PeerInfo& p = all[r];
    if (p.rank != static_cast<int32_t>(r)) __builtin_trap();
    // Reading them as C strings must stay inside the record.
    if (strlen(p.hostId) >= sizeof(p.hostId) || strlen(p.machineId) >= sizeof(p.machineId) ||
        strlen(p.shmName) >= sizeof(p.shmName))
      __builtin_trap();
  }
  return 0;
}
