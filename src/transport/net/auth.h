// Connection authentication shared by the bootstrap and the TCP transport. A connecting side first
// sends an AuthHello: who it is and what the connection is for, a fresh nonce, and a SipHash-2-4
// MAC of all of it keyed with the job secret. The accepting side reads exactly that many bytes,
// checks the MAC, and only then reads anything else; the secret itself never crosses the wire.
// Strangers (port scanners, garbage, another job's ranks) are dropped and logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/deadline.h"
#include "core/status.h"

namespace strata {

constexpr int kSecretBytes = 16;
constexpr uint32_t kAuthMagic = 0x53544155;  // "STAU"
constexpr uint32_t kAuthVersion = 1;

enum class AuthPurpose : uint32_t { Bootstrap = 1, Data = 2, RootReply = 3 };

// SipHash-2-4 (Aumasson and Bernstein): a keyed 64-bit MAC, fast on short messages.
uint64_t SipHash24(const uint8_t key[kSecretBytes], const void* data, size_t len);

// Fixed size on the wire.
struct AuthHello {
  uint32_t magic;
  uint32_t version;
  uint32_t purpose;  // AuthPurpose
  int32_t fromRank;
  int32_t nranks;  // the sender's idea of the communicator size
  int32_t toRank;  // data connections: the accepting rank; bootstrap: -1
  int32_t channel;
  int32_t sock;
  uint8_t nonce[16];
  uint64_t mac;  // SipHash24(secret, every byte above)
};
static_assert(sizeof(AuthHello) == 56, "AuthHello is a wire format");

AuthHello MakeAuthHello(const uint8_t secret[kSecretBytes], AuthPurpose purpose, int fromRank, int nranks, int toRank,
                        int channel, int sock);
// Checks bytes received from an unauthenticated peer: size, magic, version, purpose, MAC. A pure
// function of its input (fuzzed in tests/fuzz). On success *out holds the hello.
Status VerifyAuthHello(const void* bytes, size_t len, const uint8_t secret[kSecretBytes], AuthPurpose purpose,
                       AuthHello* out);
// The acceptor's proof back to the connector: a MAC over the connector's nonce.
uint64_t AuthReplyMac(const uint8_t secret[kSecretBytes], const AuthHello& hello);

// Accepts connections on a listening socket and hands out only those whose hello verifies. Many
// strangers at once cost no time: pending connections are read side by side, each with a short
// window for its hello, and a bounded number are kept.
class AuthAcceptor {
 public:
  AuthAcceptor(int listenFd, const uint8_t secret[kSecretBytes], AuthPurpose purpose, const char* who);
  ~AuthAcceptor();
  AuthAcceptor(const AuthAcceptor&) = delete;
  AuthAcceptor& operator=(const AuthAcceptor&) = delete;

  // The next authenticated connection (blocking descriptor) and its hello; strataTimeout at the deadline.
  Status next(Deadline deadline, int* fd, AuthHello* hello);
  int dropped() const { return dropped_; }

  static constexpr int kHelloWindowMs = 2000;
  static constexpr size_t kMaxPending = 128;

 private:
  struct Pending {
    int fd = -1;
    size_t got = 0;
    uint8_t buf[sizeof(AuthHello)];
    Deadline until = Deadline::Never();
  };
  void drop(size_t i, const char* why);
  void acceptNew();

  int listenFd_;
  uint8_t secret_[kSecretBytes];
  AuthPurpose purpose_;
  const char* who_;
  std::vector<Pending> pending_;
  int dropped_ = 0;
};

}  // namespace strata
