#include "core/peer_monitor.h"

#include <poll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/log.h"

namespace strata {

namespace {
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

// pidfds are close-on-exec from birth.
int PidfdOpen(int pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

// Without pidfds: gone, or a zombie nobody has reaped yet.
bool ProcessDeadByProc(int pid) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  FILE* f = fopen(path, "r");
  if (!f) return errno == ENOENT;
  char buf[512];
  const size_t n = fread(buf, 1, sizeof(buf) - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char* paren = strrchr(buf, ')');  // the command name may hold spaces and parentheses
  return paren && (paren[2] == 'Z' || paren[2] == 'X');
}
}  // namespace

uint64_t PidNamespaceId() {
  struct stat st;
  if (stat("/proc/self/ns/pid", &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_ino);
}

PeerMonitor::~PeerMonitor() {
  for (Watched& w : watched_)
    if (w.pidfd >= 0) close(w.pidfd);
}

void PeerMonitor::watch(const std::vector<PeerInfo>& peers, int myRank) {
  const PeerInfo& me = peers[myRank];
  for (const PeerInfo& p : peers) {
    if (p.rank == myRank || p.pid <= 0) continue;
    if (strncmp(p.machineId, me.machineId, sizeof(p.machineId)) != 0 || p.pidNamespace != me.pidNamespace ||
        me.pidNamespace == 0)
      continue;
    int fd = PidfdOpen(p.pid);
    if (fd < 0 && errno == ESRCH) {
      watched_.push_back(Watched{p.rank, p.pid, -1});  // already gone: /proc says so too
      continue;
    }
    watched_.push_back(Watched{p.rank, p.pid, fd});
  }
  STRATA_LOG(INFO, INIT, "watching %zu peer process(es) on this machine", watched_.size());
}

size_t PeerMonitor::descriptors() const {
  size_t n = 0;
  for (const Watched& w : watched_) n += w.pidfd >= 0;
  return n;
}

std::vector<int> PeerMonitor::deadRanks() const {
  std::vector<int> dead;
  std::vector<pollfd> fds;
  std::vector<int> who;
  for (const Watched& w : watched_) {
    if (w.pidfd >= 0) {
      fds.push_back(pollfd{w.pidfd, POLLIN, 0});
      who.push_back(w.rank);
    } else if (ProcessDeadByProc(w.pid)) {
      dead.push_back(w.rank);
    }
  }
  if (!fds.empty() && poll(fds.data(), fds.size(), 0) > 0) {
    for (size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) dead.push_back(who[i]);
  }
  std::sort(dead.begin(), dead.end());
  return dead;
}

std::string PeerMonitor::describe(const std::vector<int>& dead) const {
  std::string out;
  for (int r : dead) {
    int pid = -1;
    for (const Watched& w : watched_)
      if (w.rank == r) pid = w.pid;
    if (!out.empty()) out += ", ";
    out += "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ")" +
           (departed(r) ? " destroyed its communicator and exited" : " died");
  }
  return out;
}

}  // namespace strata
