// Bootstrap: how ranks find each other. The root (a thread in the process that created the unique
// id, or in rank 0) collects every rank's PeerInfo and sends back the full table, then serves one
// barrier that marks the end of connection setup. Every message is authenticated with the job
// secret; anything else on the root's port is dropped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "strata/strata.h"
#include "transport/net/socket.h"
#include "transport/net/tcp/tcp_transport.h"

namespace strata {

// What a unique id carries, inside strataUniqueId's 128 bytes.
struct UniqueIdData {
  uint32_t magic;
  uint32_t version;
  uint32_t ip;  // network order
  uint16_t port;
  uint16_t pad;
  uint8_t secret[kSecretBytes];
};
constexpr uint32_t kUniqueIdMagic = 0x53545249;  // "STRI"

void EncodeUniqueId(const UniqueIdData& data, strataUniqueId* id);
Status DecodeUniqueId(const strataUniqueId& id, UniqueIdData* data);
void RandomBytes(void* buf, size_t len);

// Everything a rank tells the others at init; fixed size on the wire.
struct PeerInfo {
  char hostId[128];     // groups ranks into hosts (STRATA_HOSTID may override it)
  char machineId[128];  // the real machine, for CPU sharing decisions
  int32_t rank;
  int32_t pid;
  uint64_t pidNamespace;  // with machineId: whether `pid` names a process this rank can watch
  uint32_t ip;  // TCP listener, network order
  uint16_t port;
  uint16_t pad;
  char shmName[64];  // empty when this rank created no segment
  // Geometry; every rank uses rank 0's so that plans and FIFOs agree.
  uint32_t slotBytes, nslots, nchannels, nsocks, directMaxBytes;
  int32_t shmDisable;
  int32_t checkCalls;  // STRATA_CHECK_CALLS: must agree, since it adds a message to every call
  int32_t pad2;
};

// Starts the root on an already listening socket; it serves one communicator and exits.
void StartBootstrapRoot(int listenFd, const uint8_t secret[kSecretBytes], int64_t timeoutMs);

// One rank's side of the bootstrap.
class BootstrapClient {
 public:
  ~BootstrapClient();
  // Connects to the root (retrying until it listens).
  Status connect(const SockAddr& root, const uint8_t secret[kSecretBytes], Deadline deadline);
  // The local address of the connection to the root: the interface that reaches the other hosts.
  uint32_t localIp() const { return localIp_; }
  // Sends this rank's info, returns every rank's (indexed by rank).
  Status exchange(int rank, int nranks, const PeerInfo& mine, std::vector<PeerInfo>* all, Deadline deadline);
  // Reports this rank's setup result and waits until all ranks have reported; fails if any failed.
  Status barrier(strataResult_t myResult, Deadline deadline);

 private:
  int fd_ = -1;
  uint32_t localIp_ = 0;
  uint8_t secret_[kSecretBytes] = {};
};

}  // namespace strata
