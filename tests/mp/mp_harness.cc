#include "mp_harness.h"

#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "core/call_trial.h"
#include "transport/shm/shm_segment.h"

namespace strata {
namespace test {

std::string MpResult::summary() const {
  std::string s;
  for (const std::string& f : failures) s += f + "\n";
  return s;
}

namespace {

void WriteAll(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += n;
  }
}

bool ReadAll(int fd, void* buf, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t n = read(fd, static_cast<char*>(buf) + off, len - off);
    if (n <= 0) return false;
    off += n;
  }
  return true;
}

int ThreadCount() {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return 1;
  char line[256];
  int threads = 1;
  while (fgets(line, sizeof(line), f))
    if (sscanf(line, "Threads: %d", &threads) == 1) break;
  fclose(f);
  return threads;
}

// A bootstrap root thread of an earlier run may still be finishing (freeing memory) for a moment
// after its communicator is up; a fork then could copy a held allocator lock into the child.
void WaitUntilSingleThreaded() {
  for (int i = 0; i < 2000 && ThreadCount() > 1; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

MpResult Run(const MpOptions& o, const RankFn& fn, bool makeComm) {
  MpResult result;
  signal(SIGPIPE, SIG_IGN);  // a rank that died must not take the harness with it
  WaitUntilSingleThreaded();
  // Every rank is forked before the unique id exists: strataGetUniqueId starts the bootstrap root
  // thread, and a fork while another thread may hold an allocator lock can deadlock the child (seen
  // under AddressSanitizer). The id reaches the ranks through a pipe instead.
  std::vector<pid_t> pids(o.nranks, -1);
  std::vector<int> pipes(o.nranks, -1);
  std::vector<int> idPipes(o.nranks, -1);
  for (int r = 0; r < o.nranks; ++r) {
    int fds[2], idFds[2];
    if (pipe(fds) != 0 || pipe(idFds) != 0) {
      result.failures.push_back("pipe failed");
      break;
    }
    pid_t pid = fork();
    if (pid == 0) {
      close(fds[0]);
      close(idFds[1]);
      for (int q = 0; q < r; ++q) close(pipes[q]), close(idPipes[q]);
      strataUniqueId id{};
      if (makeComm && !ReadAll(idFds[0], &id, sizeof(id))) _exit(3);  // the parent gave up
      close(idFds[0]);
      const int perNode = (o.nranks + o.nodes - 1) / o.nodes;
      setenv("STRATA_HOSTID", ("mp-node" + std::to_string(r / perNode)).c_str(), 1);
      std::string msg;
      strataComm_t comm = nullptr;
      if (o.beforeInit) o.beforeInit(r);
      if (makeComm) {
        strataConfig_t cfg = STRATA_CONFIG_INITIALIZER;
        cfg.shmDisable = o.tcp ? 1 : 0;
        cfg.timeoutMs = o.commTimeoutMs;
        strataResult_t rc = strataCommInitRankConfig(&comm, o.nranks, id, r, &cfg);
        if (rc != strataSuccess) msg = std::string("init failed: ") + strataGetLastError(nullptr);
      }
      if (msg.empty()) msg = fn(r, o.nranks, comm);
      if (comm && o.destroyComm && strataCommDestroy(comm) != strataSuccess && msg.empty())
        msg = std::string("destroy failed: ") + strataGetLastError(nullptr);
      WriteAll(fds[1], msg);
      close(fds[1]);
      _exit(msg.empty() ? 0 : 1);
    }
    close(fds[1]);
    close(idFds[0]);
    pids[r] = pid;
    pipes[r] = fds[0];
    idPipes[r] = idFds[1];
  }
  strataUniqueId id{};
  if (makeComm && result.failures.empty() && strataGetUniqueId(&id) != strataSuccess)
    result.failures.push_back(std::string("strataGetUniqueId failed: ") + strataGetLastError(nullptr));
  if (makeComm && result.failures.empty() && o.onUniqueId) o.onUniqueId(id);
  for (int r = 0; r < o.nranks; ++r) {
    if (idPipes[r] < 0) continue;
    if (makeComm && result.failures.empty()) WriteAll(idPipes[r], std::string(id.internal, sizeof(id.internal)));
    close(idPipes[r]);  // without an id the rank exits
  }
  // Collect messages until every pipe closes or the deadline passes.
  std::vector<std::string> msgs(o.nranks);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.timeoutSec);
  int open = 0;
  for (int fd : pipes) open += fd >= 0;
  while (open > 0 && std::chrono::steady_clock::now() < deadline) {
    std::vector<pollfd> pfds;
    std::vector<int> who;
    for (int r = 0; r < o.nranks; ++r)
      if (pipes[r] >= 0) pfds.push_back(pollfd{pipes[r], POLLIN, 0}), who.push_back(r);
    if (poll(pfds.data(), pfds.size(), 200) <= 0) continue;
    for (size_t i = 0; i < pfds.size(); ++i) {
      if (!pfds[i].revents) continue;
      char buf[4096];
      ssize_t n = read(pfds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        msgs[who[i]].append(buf, n);
      } else {
        close(pipes[who[i]]);
        pipes[who[i]] = -1;
        --open;
      }
    }
  }
  for (int r = 0; r < o.nranks; ++r) {
    if (pipes[r] >= 0) {
      result.failures.push_back("rank " + std::to_string(r) + ": did not finish within " +
                                std::to_string(o.timeoutSec) + " s (killed)");
      kill(pids[r], SIGKILL);
      close(pipes[r]);
    }
  }
  for (int r = 0; r < o.nranks; ++r) {
    if (pids[r] < 0) continue;
    int status = 0;
    waitpid(pids[r], &status, 0);
    // A rank killed during init may leave its segment behind: take it away. One that exited by itself
    // must have removed its own.
    const std::vector<std::string> left = RemoveSegmentsOfProcess(pids[r]);
    if (!left.empty() && WIFEXITED(status))
      result.failures.push_back("rank " + std::to_string(r) + " exited leaving shared memory behind: /dev/shm/" +
                                left.front());
    if (!msgs[r].empty())
      result.failures.push_back("rank " + std::to_string(r) + ": " + msgs[r]);
    else if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
      result.failures.push_back("rank " + std::to_string(r) + ": killed by signal " + std::to_string(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      result.failures.push_back("rank " + std::to_string(r) + ": exit status " + std::to_string(WEXITSTATUS(status)));
  }
  return result;
}

}  // namespace

MpResult RunRanks(const MpOptions& options, const RankFn& fn) { return Run(options, fn, true); }

long HugeKbOfMapping(const void* at, uintptr_t* start) {
  std::ifstream smaps("/proc/self/smaps");
  const unsigned long p = static_cast<unsigned long>(reinterpret_cast<uintptr_t>(at));
  bool in = false;
  for (std::string line; std::getline(smaps, line);) {
    // A mapping's first line is "start-end perms ...": hex digits up to the dash, before any space.
    unsigned long begin = 0, end = 0;
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < line.find(' ') &&
        std::sscanf(line.c_str(), "%lx-%lx", &begin, &end) == 2)
      in = begin <= p && p < end;
    if (in && start) *start = begin;
    long kb = 0;
    if (in && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kb) == 1) return kb;
  }
  return -1;
}

bool KernelCollapsesHugePages() {
  static const bool works = [] {
    constexpr size_t kStretch = size_t{2} << 20;
    char* p =
        static_cast<char*>(mmap(nullptr, 2 * kStretch, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (p == MAP_FAILED) return false;
    std::memset(p, 1, 2 * kStretch);
    char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(p) + kStretch - 1) & ~(kStretch - 1));
    const bool ok = madvise(aligned, kStretch, 25 /* MADV_COLLAPSE */) == 0 && HugeKbOfMapping(p) >= 2048;
    munmap(p, 2 * kStretch);
    return ok;
  }();
  return works;
}

bool CrossMemoryAttachWorks() {
  static const bool works = [] {
    int ready[2], done[2];
    if (pipe(ready) != 0) return false;
    if (pipe(done) != 0) {
      close(ready[0]);
      close(ready[1]);
      return false;
    }
    static volatile uint64_t word = 0;
    word = 0;
    const pid_t child = fork();
    if (child == 0) {
      word = 0x5eed5eedULL;  // the child's copy only
      char c = 1;
      if (write(ready[1], &c, 1) != 1) _exit(1);
      if (read(done[0], &c, 1) < 0) _exit(1);
      _exit(word == 0x1234ULL ? 0 : 2);
    }
    bool ok = false;
    char c = 0;
    if (child > 0 && read(ready[0], &c, 1) == 1) {
      uint64_t seen = 0, put = 0x1234ULL;
      iovec local{&seen, sizeof(seen)}, remote{const_cast<uint64_t*>(&word), sizeof(seen)};
      const bool readOk = process_vm_readv(child, &local, 1, &remote, 1, 0) == sizeof(seen) && seen == 0x5eed5eedULL;
      iovec out{&put, sizeof(put)};
      ok = readOk && process_vm_writev(child, &out, 1, &remote, 1, 0) == sizeof(put);
      if (write(done[1], &c, 1) != 1) ok = false;
    }
    int status = 0;
    if (child > 0 && waitpid(child, &status, 0) == child) ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    for (int fd : {ready[0], ready[1], done[0], done[1]}) close(fd);
    return ok;
  }();
  return works;
}
MpResult RunProcesses(const MpOptions& options, const RankFn& fn) { return Run(options, fn, false); }

const char* FamilyCollName(FamilyColl c) {
  return c == FamilyColl::kAllReduce ? "allreduce" : c == FamilyColl::kAllGather ? "allgather" : "reducescatter";
}

std::string RunAndCheckFamilyCall(FamilyColl c, strataComm_t comm, int r, int n, size_t count, bool inPlace, float* a,
                                  float* b, const std::function<float(int, size_t)>& in, const std::string& what,
                                  std::string* ran) {
  const size_t sendN = c == FamilyColl::kReduceScatter ? count * n : count;
  float* send = a;
  float* recv = b;
  if (inPlace) {  // the allgather sends from its block of the output, the reduce-scatter's output is its block
    send = c == FamilyColl::kAllGather ? b + r * count : b;
    recv = c == FamilyColl::kReduceScatter ? b + r * count : b;
  }
  for (size_t i = 0; i < sendN; ++i) send[i] = in(r, i);
  strataResult_t rc;
  if (c == FamilyColl::kAllReduce)
    rc = strataAllReduce(send, recv, count, strataFloat32, strataSum, comm, nullptr);
  else if (c == FamilyColl::kAllGather)
    rc = strataAllGather(send, recv, count, strataFloat32, comm, nullptr);
  else
    rc = strataReduceScatter(send, recv, count, strataFloat32, strataSum, comm, nullptr);
  if (rc != strataSuccess) return what + ": " + strataGetLastError(comm);
  const char* algo = nullptr;
  if (strataCommGetLastAlgorithm(comm, &algo) != strataSuccess) return what + ": no algorithm";
  if (ran) *ran = algo;
  const size_t recvN = c == FamilyColl::kAllGather ? count * n : count;
  for (size_t i = 0; i < recvN; ++i) {
    double want = 0;
    if (c == FamilyColl::kAllGather) {
      want = in(static_cast<int>(i / count), i % count);
    } else {
      const size_t idx = c == FamilyColl::kReduceScatter ? r * count + i : i;
      for (int q = 0; q < n; ++q) want += in(q, idx);
    }
    if (recv[i] != want)
      return what + ": element " + std::to_string(i) + " is " + std::to_string(recv[i]) + ", expected " +
             std::to_string(want) + " (ran " + algo + ")";
  }
  return "";
}

int CallTrialPlansIn(const std::vector<std::string>& ran, CallTrial::Shape shape) {
  for (int n = 2; n <= CallTrial::kMaxPlans; ++n) {
    const size_t calls = static_cast<size_t>(CallTrial::Calls(n, shape));
    if (ran.size() < calls) break;
    const std::set<std::string> first(ran.begin(), ran.begin() + shape.callsPerTurn * n);  // the first round
    bool follows = first.size() == static_cast<size_t>(n);
    for (size_t i = 0; i < calls && follows; ++i)
      follows = ran[i] == ran[shape.callsPerTurn * CallTrial::Turn(n, static_cast<int>(i), shape)];
    if (follows) return n;
  }
  return 0;
}

}  // namespace test
}  // namespace strata
