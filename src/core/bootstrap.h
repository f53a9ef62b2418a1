// Bootstrap: how ranks find each other. The root (a thread in the process that created the unique
// id, or in rank 0) collects every rank's PeerInfo and sends back the full table, then serves one
// barrier that marks the end of connection setup. Every connection first proves the job secret
// (transport/net/auth.h); anything else on the root's port is dropped and logged.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"
#include "strata/strata.h"
#include "topology/comm_topology.h"
#include "transport/net/auth.h"
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

// PeerInfo::selection: the calibration at init, the timing of close candidates at a size class's first call.
constexpr uint16_t kSelectionCalibrate = 1, kSelectionTune = 2;

// Everything a rank tells the others at init; fixed size on the wire.
struct PeerInfo {
  char hostId[128];     // groups ranks into hosts (STRATA_HOSTID may override it)
  char machineId[128];  // the real machine, for CPU sharing decisions
  int32_t rank;
  int32_t pid;
  uint64_t pidNamespace;  // with machineId: whether `pid` names a process this rank can watch
  uint32_t ip;  // TCP listener, network order
  uint16_t port;
  uint16_t selection;  // kSelection* bits (STRATA_CALIBRATE, STRATA_TUNE): must agree, since both run collectives
  char shmName[64];  // empty when this rank created no segment
  // Geometry; every rank uses rank 0's so that plans and FIFOs agree.
  uint32_t slotBytes, nslots, nchannels, nsocks, directMaxBytes;
  int32_t shmDisable;
  int32_t checkCalls;  // STRATA_CHECK_CALLS: must agree, since it adds a message to every call
  int32_t timeoutMs;  // this rank's init timeout (clamped to 2^31-1): the root gives up before the first rank does
  uint32_t windowBytes;  // STRATA_WINDOW_BYTES: each half of the peer-mapped window (must agree)
  uint32_t asymmetricBell;  // this process registered for the doorbell owners' membarrier (Doorbell)
  RankPlaceWire topo;  // where the rank runs (NUMA node, binding, NIC) and its link table
  // The communicator's quantization ("config int8:128:fp32:nearest", "env none") and
  // STRATA_QUANT_MIN_BYTES: must agree, since they decide which calls run quantized plans.
  char quant[80];
  uint64_t quantMinBytes;
};

// Most ranks a communicator may have: bounds what a peer's message may make the root allocate.
constexpr int kMaxRanks = 1 << 16;

// Checks the peer table a rank received from the root before anything reads it: entry r is rank r, and
// every string field ends with a NUL inside its array (they are later read as C strings). A pure
// function (fuzzed in tests/fuzz).
Status CheckPeerTable(const PeerInfo* all, int nranks);

// The root's first answer to a rank: the proof that it knows the secret, then whether the job is
// complete (the peer table follows) or why not. Fixed size on the wire.
struct RootReply {
  uint32_t magic;
  int32_t result;  // strataSuccess, else why this rank cannot join
  int32_t reason;  // RootRefusal
  int32_t nranks;  // the root's rank count
  int32_t joined;
  int32_t missingCount;  // ranks that never joined (timeout); the first 16 are listed
  int32_t missing[16];
  uint64_t proof;  // AuthReplyMac over the rank's hello
};
constexpr uint32_t kRootReplyMagic = 0x53545252;  // "STRR"
enum class RootRefusal : int32_t { None = 0, Timeout = 1, DuplicateRank = 2, RankCountDiffers = 3 };

// Checks a RootReply received by rank `rank` of `nranks` (after `hello`): the proof, then the
// verdict, turned into an error that names the ranks that never joined. Pure (fuzzed).
Status CheckRootReply(const void* bytes, size_t len, const uint8_t secret[kSecretBytes], const AuthHello& hello,
                      int rank, int nranks);

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
  int rank_ = -1;
  uint8_t secret_[kSecretBytes] = {};
};

}  // namespace strata
