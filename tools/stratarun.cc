// stratarun: starts N local ranks of a program with the environment that strata's bootstrap reads.
// Local only (Linux); across hosts use mpirun, srun or torchrun. Of libstrata it uses only the segment
// naming, to remove what a rank killed during init leaves in /dev/shm.

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "transport/shm/shm_segment.h"

namespace {

constexpr int kMaxRanks = 4096;
constexpr std::chrono::seconds kKillGrace{3};
// While stopping, orphans of dead ranks are adopted by us silently (no SIGCHLD), so we rescan this often.
constexpr int kSweepIntervalMs = 50;
// A line longer than this is passed on in pieces rather than buffered without bound.
constexpr size_t kMaxPendingLine = size_t{64} * 1024;
constexpr int kForwardedSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

using Clock = std::chrono::steady_clock;

// The index (into the CPUs stratarun may use) rank `rank` of `nranks` is pinned to: its own CPU while there
// are enough, else contiguous blocks of ranks per CPU.
size_t BlockCpu(int rank, int nranks, size_t ncpus) {
  if (static_cast<size_t>(nranks) <= ncpus) return static_cast<size_t>(rank);
  return static_cast<size_t>(rank) * ncpus / static_cast<size_t>(nranks);
}

const char kUsage[] =
    "usage: stratarun -n N [--nodes K] [--bind core|none] [--tag-output] [--timeout SEC] [-x VAR[=VALUE]]...\n"
    "                 PROG [ARGS...]\n"
    "\n"
    "Starts N local ranks of PROG with STRATA_RANK, STRATA_NRANKS, STRATA_LOCAL_RANK, STRATA_LOCAL_SIZE,\n"
    "STRATA_ROOT_ADDR and STRATA_SECRET set; rank 0 also gets STRATA_ROOT_FD, a listening socket.\n"
    "\n"
    "  -n, -np N        number of ranks, 1 to 4096\n"
    "  --nodes K        split the ranks into K fake hosts (sets STRATA_HOSTID=node<k>)\n"
    "  --bind core|none core (the default): pin rank i to the i-th CPU stratarun may run on, or with more\n"
    "                   ranks than CPUs to CPU i * CPUs / N (contiguous blocks); none: no pinning\n"
    "  --tag-output     prefix every line of output with [rank]\n"
    "  --timeout SEC    stop all ranks after SEC seconds and exit 124\n"
    "  -x VAR=VALUE     set VAR for all ranks (-x VAR passes VAR through, as mpirun does)\n"
    "  -h, --help       show this help\n"
    "\n"
    "If a rank fails, the others get SIGTERM, then SIGKILL after 3 s, and stratarun exits with the\n"
    "failed rank's status (128+signal if it was killed).\n";

struct Options {
  int nranks = 0;
  int nnodes = 0;  // 0: no --nodes; STRATA_HOSTID stays as inherited.
  bool tag_output = false;
  int bind = 1;  // 1 core, 0 none
  double timeout_sec = 0;             // 0: no timeout.
  std::vector<std::string> set_vars;  // "VAR=VALUE" from -x.
  std::vector<char*> argv;            // PROG ARGS..., null-terminated.
};

enum class ParseResult { kRun, kHelp, kError };

[[nodiscard]] bool ParseInt(const std::string& text, long long* value) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtoll(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

[[nodiscard]] ParseResult ParseOptions(int argc, char** argv, Options* opt, std::string* error) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') break;  // First non-option: PROG.
    std::string name = arg;
    std::string value;
    bool inline_value = false;
    size_t eq = arg.find('=');
    if (arg.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      name = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inline_value = true;
    }
    auto take_value = [&]() {
      if (inline_value) return true;
      if (i + 1 >= argc) {
        *error = name + " needs a value";
        return false;
      }
      value = argv[++i];
      return true;
    };
    auto no_value = [&]() {
      if (inline_value) *error = name + " takes no value";
      return !inline_value;
    };
    long long number = 0;
    if (name == "-h" || name == "--help") return ParseResult::kHelp;
    if (name == "-n" || name == "-np" || name == "--np") {
      if (!take_value()) return ParseResult::kError;
      if (!ParseInt(value, &number) || number < 1 || number > kMaxRanks) {
        *error = "-n must be a number from 1 to " + std::to_string(kMaxRanks) + ", got '" + value + "'";
        return ParseResult::kError;
      }
      opt->nranks = static_cast<int>(number);
    } else if (name == "--nodes") {
      if (!take_value()) return ParseResult::kError;
      if (!ParseInt(value, &number) || number < 1 || number > kMaxRanks) {
        *error = "--nodes must be a number from 1 to the number of ranks, got '" + value + "'";
        return ParseResult::kError;
      }
      opt->nnodes = static_cast<int>(number);
    } else if (name == "--bind") {
      if (!take_value()) return ParseResult::kError;
      if (value != "core" && value != "none") {
        *error = "--bind must be core or none, got '" + value + "'";
        return ParseResult::kError;
      }
      opt->bind = value == "core" ? 1 : 0;
    } else if (name == "--tag-output") {
      if (!no_value()) return ParseResult::kError;
      opt->tag_output = true;
    } else if (name == "--timeout") {
      if (!take_value()) return ParseResult::kError;
      char* end = nullptr;
      double sec = std::strtod(value.c_str(), &end);
      // The upper bound keeps the deadline arithmetic far from overflow.
      if (value.empty() || *end != '\0' || !std::isfinite(sec) || sec <= 0 || sec > 1e9) {
        *error = "--timeout must be a positive number of seconds, got '" + value + "'";
        return ParseResult::kError;
      }
      opt->timeout_sec = sec;
    } else if (name == "-x") {
      if (!take_value()) return ParseResult::kError;
      if (value.empty() || value[0] == '=') {
        *error = "-x needs VAR or VAR=VALUE, got '" + value + "'";
        return ParseResult::kError;
      }
      // A bare VAR is inherited anyway; accepted so that mpirun command lines work unchanged.
      if (value.find('=') != std::string::npos) opt->set_vars.push_back(value);
    } else {
      *error = "unknown option '" + arg + "'";
      return ParseResult::kError;
    }
  }
  if (opt->nranks == 0) {
    *error = "missing -n N";
    return ParseResult::kError;
  }
  if (opt->nnodes > opt->nranks) {
    *error = "--nodes " + std::to_string(opt->nnodes) + " is more than the " + std::to_string(opt->nranks) + " ranks";
    return ParseResult::kError;
  }
  if (i >= argc) {
    *error = "no program given";
    return ParseResult::kError;
  }
  opt->argv.assign(argv + i, argv + argc);
  opt->argv.push_back(nullptr);
  return ParseResult::kRun;
}

void SetEnv(std::vector<std::string>* env, const std::string& assignment) {
  size_t name_len = assignment.find('=') + 1;  // Includes the '='.
  for (std::string& entry : *env) {
    if (entry.compare(0, name_len, assignment, 0, name_len) == 0) {
      entry = assignment;
      return;
    }
  }
  env->push_back(assignment);
}

void UnsetEnv(std::vector<std::string>* env, const std::string& name) {
  std::string prefix = name + "=";
  env->erase(std::remove_if(env->begin(), env->end(),
                            [&](const std::string& e) { return e.compare(0, prefix.size(), prefix) == 0; }),
             env->end());
}

std::string DescribeStatus(int status) {
  char text[128];
  if (WIFSIGNALED(status)) {
    std::snprintf(text, sizeof text, "killed by signal %d (%s)%s", WTERMSIG(status), strsignal(WTERMSIG(status)),
                  WCOREDUMP(status) ? ", core dumped" : "");
  } else {
    std::snprintf(text, sizeof text, "exited with status %d", WEXITSTATUS(status));
  }
  return text;
}

int ExitCodeOf(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

std::string Plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : noun.back() == 's' ? "es" : "s");
}

// Our children as the kernel sees them, adopted orphans included. /proc/<pid>/task/<tid>/children needs
// CONFIG_PROC_CHILDREN, which many kernels lack, so scan every process's parent instead.
std::vector<pid_t> ListChildren() {
  std::vector<pid_t> children;
  const pid_t self = getpid();
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return children;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    const std::string path = std::string("/proc/") + entry->d_name + "/stat";
    FILE* file = std::fopen(path.c_str(), "re");
    if (file == nullptr) continue;
    char buf[512];
    size_t len = std::fread(buf, 1, sizeof buf - 1, file);
    std::fclose(file);
    buf[len] = '\0';
    // Fields after the command name, which may itself hold spaces and ')': "S PPID ...".
    const char* after_comm = std::strrchr(buf, ')');
    int ppid = 0;
    if (after_comm != nullptr && std::sscanf(after_comm + 1, " %*c %d", &ppid) == 1 && ppid == self) {
      children.push_back(static_cast<pid_t>(std::atoi(entry->d_name)));
    }
  }
  closedir(dir);
  return children;
}

// One output pipe of one rank, passed on line by line with a "[rank] " prefix.
struct TaggedStream {
  int fd = -1;
  int target_fd = -1;
  int rank = -1;
  std::string pending;  // A partial line waiting for its newline.
};

int g_signal_pipe[2] = {-1, -1};

void OnSignal(int sig, siginfo_t* info, void* /*context*/) {
  int saved_errno = errno;
  // A tty sends SIGINT/SIGQUIT with SI_KERNEL to the whole foreground process group, ranks included.
  unsigned char message[2] = {static_cast<unsigned char>(sig),
                              static_cast<unsigned char>(info != nullptr && info->si_code == SI_KERNEL)};
  if (write(g_signal_pipe[1], message, sizeof message) < 0) {
    // Pipe full: a wakeup is already queued.
  }
  errno = saved_errno;
}

class Launcher {
 public:
  explicit Launcher(Options options) : opt_(std::move(options)) {}

  [[nodiscard]] int Run() {
    if (!Setup()) return 1;
    StartRanks();
    return Supervise();
  }

 private:
  struct Rank {
    pid_t pid = -1;
    bool running = false;
    bool term_sent = false;
    TaggedStream out, err;
  };

  [[nodiscard]] bool Setup() {
    // A closed 0/1/2 would be reused by our sockets or pipes and then clobbered by dup2 in the child.
    for (int fd = 0; fd <= 2; ++fd) {
      if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0) return Fail("open /dev/null");
    }
    // Ranks and any processes they leave behind are re-parented to us, so none outlives the launcher.
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    if (!MakeSecret() || !MakeListener() || !RaiseFileLimit()) return false;
    if (pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return Fail("pipe2");
    sigprocmask(SIG_SETMASK, nullptr, &original_mask_);
    sigemptyset(&handled_);
    struct sigaction action {};
    action.sa_sigaction = OnSignal;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    for (int sig : kForwardedSignals) {
      struct sigaction old {};
      sigaction(sig, nullptr, &old);
      if (old.sa_handler == SIG_IGN) continue;  // E.g. SIGINT in a background job, or nohup: ranks keep ignoring.
      Install(sig, action);
    }
    action.sa_flags |= SA_NOCLDSTOP;
    Install(SIGCHLD, action);
    if (opt_.tag_output) {  // A closed stdout must not kill the launcher while ranks still run.
      struct sigaction ignore {};
      ignore.sa_handler = SIG_IGN;
      Install(SIGPIPE, ignore);
    }
    return true;
  }

  void Install(int sig, const struct sigaction& action) {
    struct sigaction old {};
    sigaction(sig, &action, &old);
    saved_actions_.push_back({sig, old});
    sigaddset(&handled_, sig);
  }

  [[nodiscard]] bool Fail(const char* what) {
    std::fprintf(stderr, "stratarun: %s: %s\n", what, strerror(errno));
    return false;
  }

  [[nodiscard]] bool MakeSecret() {
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fail("open /dev/urandom");
    unsigned char bytes[16];
    size_t got = 0;
    while (got < sizeof bytes) {
      ssize_t n = read(fd, bytes + got, sizeof bytes - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        close(fd);
        return Fail("read /dev/urandom");
      }
      got += static_cast<size_t>(n);
    }
    close(fd);
    static const char kHex[] = "0123456789abcdef";
    for (unsigned char b : bytes) {
      secret_ += kHex[b >> 4];
      secret_ += kHex[b & 15];
    }
    return true;
  }

  // Bound by the launcher and handed to rank 0, so no rank races another process for a free port.
  [[nodiscard]] bool MakeListener() {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0) return Fail("socket");
    int one = 1;
    if (setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) return Fail("SO_REUSEADDR");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return Fail("bind 127.0.0.1:0");
    if (listen(listen_fd_, std::max(1024, opt_.nranks)) != 0) return Fail("listen");
    socklen_t len = sizeof addr;
    if (getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return Fail("getsockname");
    port_ = ntohs(addr.sin_port);
    return true;
  }

  // --tag-output keeps two pipes per rank open here; children get the original limit back.
  [[nodiscard]] bool RaiseFileLimit() {
    if (getrlimit(RLIMIT_NOFILE, &original_nofile_) != 0) return Fail("getrlimit");
    rlim_t needed = 64 + (opt_.tag_output ? 2 * static_cast<rlim_t>(opt_.nranks) : 0);
    if (original_nofile_.rlim_cur == RLIM_INFINITY || original_nofile_.rlim_cur >= needed) return true;
    if (original_nofile_.rlim_max != RLIM_INFINITY && original_nofile_.rlim_max < needed) {
      std::fprintf(stderr, "stratarun: %d ranks need %llu open files here, but the hard limit is %llu\n", opt_.nranks,
                   static_cast<unsigned long long>(needed), static_cast<unsigned long long>(original_nofile_.rlim_max));
      return false;
    }
    rlimit raised = original_nofile_;
    raised.rlim_cur = needed;
    if (setrlimit(RLIMIT_NOFILE, &raised) != 0) return Fail("setrlimit RLIMIT_NOFILE");
    return true;
  }

  std::vector<std::string> BaseEnvironment() const {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
    for (const std::string& assignment : opt_.set_vars) SetEnv(&env, assignment);
    UnsetEnv(&env, "STRATA_ROOT_FD");  // Only rank 0 may see one, and only ours.
    SetEnv(&env, "STRATA_NRANKS=" + std::to_string(opt_.nranks));
    SetEnv(&env, "STRATA_ROOT_ADDR=127.0.0.1:" + std::to_string(port_));
    SetEnv(&env, "STRATA_SECRET=" + secret_);
    return env;
  }

  void StartRanks() {
    const int n = opt_.nranks;
    // Pinning as mpirun does for small jobs: ranks forked on one CPU otherwise share it until the
    // scheduler spreads them, which takes long enough to halve a short benchmark's bandwidth. With more
    // ranks than CPUs, in contiguous blocks (rank i on CPU i * cpus / ranks), whose neighbours share a
    // core: 4 ranks on 2 cores, unpinned, ran their small calls at 12 or 24 us per launch and their
    // calibrations swung with it; in blocks 3 launches ran them at 12.6-13.0 us and 16 MiB at 3.5-3.8
    // GB/s, where round-robin pinning (0 and 2 on one core) ran 16 MiB at 1.9-2.1 (docs/PERFORMANCE.md,
    // "Pinning with more ranks than cores").
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &allowed)) cpus_.push_back(c);
    }
    if (opt_.bind == 0) cpus_.clear();
    const int nodes = opt_.nnodes > 0 ? opt_.nnodes : 1;
    const std::vector<std::string> base_env = BaseEnvironment();
    ranks_.resize(n);
    int rank = 0;
    for (int node = 0; node < nodes && rank < n; ++node) {
      // Contiguous blocks, as even as possible; earlier nodes take the extra ranks.
      const int local_size = n / nodes + (node < n % nodes ? 1 : 0);
      for (int local = 0; local < local_size; ++local, ++rank) {
        std::vector<std::string> env = base_env;
        SetEnv(&env, "STRATA_RANK=" + std::to_string(rank));
        SetEnv(&env, "STRATA_LOCAL_RANK=" + std::to_string(local));
        SetEnv(&env, "STRATA_LOCAL_SIZE=" + std::to_string(local_size));
        if (opt_.nnodes > 0) SetEnv(&env, "STRATA_HOSTID=node" + std::to_string(node));
        if (rank == 0) SetEnv(&env, "STRATA_ROOT_FD=" + std::to_string(listen_fd_));
        if (!StartRank(rank, &env)) {
          rank = n;  // Leaves both loops.
          break;
        }
      }
    }
    close(listen_fd_);  // Rank 0 holds its own copy now.
    listen_fd_ = -1;
  }

  [[nodiscard]] bool StartRank(int rank, std::vector<std::string>* env) {
    std::vector<char*> envp;
    for (std::string& entry : *env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};
    if (opt_.tag_output && (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0)) {
      int saved_errno = errno;
      for (int fd : {out[0], out[1]}) {
        if (fd >= 0) close(fd);
      }
      return LaunchFailed(rank, "pipe2", saved_errno);
    }
    // Blocked so that our handlers never run in the child between fork and exec.
    sigset_t previous;
    sigprocmask(SIG_BLOCK, &handled_, &previous);
    const pid_t launcher = getpid();
    const pid_t pid = fork();
    if (pid == 0) ExecRank(rank, envp.data(), out[1], err[1], launcher);
    const int fork_errno = errno;
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    if (opt_.tag_output) {
      close(out[1]);
      close(err[1]);
    }
    if (pid < 0) {
      if (opt_.tag_output) {
        close(out[0]);
        close(err[0]);
      }
      return LaunchFailed(rank, "fork", fork_errno);
    }
    Rank& r = ranks_[rank];
    r.pid = pid;
    r.running = true;
    rank_of_pid_[pid] = rank;
    ++running_;
    if (opt_.tag_output) {
      r.out = {out[0], STDOUT_FILENO, rank, {}};
      r.err = {err[0], STDERR_FILENO, rank, {}};
      fcntl(out[0], F_SETFL, O_NONBLOCK);
      fcntl(err[0], F_SETFL, O_NONBLOCK);
    }
    return true;
  }

  [[noreturn]] void ExecRank(int rank, char** envp, int out_fd, int err_fd, pid_t launcher) {
    // The rank should see the signal state and file limit that stratarun itself was started with.
    for (const SavedAction& saved : saved_actions_) sigaction(saved.sig, &saved.action, nullptr);
    sigprocmask(SIG_SETMASK, &original_mask_, nullptr);
    setrlimit(RLIMIT_NOFILE, &original_nofile_);
    // If the launcher is SIGKILLed, its ranks should not run on unsupervised.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != launcher) _exit(1);
    if (out_fd >= 0 && (dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)) _exit(127);
    // Every other descriptor of ours is close-on-exec, so only rank 0 inherits the listener.
    if (rank == 0) fcntl(listen_fd_, F_SETFD, 0);
    if (!cpus_.empty()) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus_[BlockCpu(rank, opt_.nranks, cpus_.size())], &one);
      sched_setaffinity(0, sizeof(one), &one);
    }
    environ = envp;
    execvp(opt_.argv[0], opt_.argv.data());
    dprintf(STDERR_FILENO, "stratarun: cannot execute %s: %s\n", opt_.argv[0], strerror(errno));
    _exit(127);
  }

  [[nodiscard]] bool LaunchFailed(int rank, const char* what, int error) {
    std::fprintf(stderr, "stratarun: cannot start rank %d: %s: %s", rank, what, strerror(error));
    if (running_ > 0) std::fprintf(stderr, "; stopping the %s already started", Plural(running_, "rank").c_str());
    std::fprintf(stderr, "\n");
    exit_code_ = 1;
    BeginStop();
    return false;
  }

  // Runs until no child of ours is left, adopted orphans included, and returns the exit code.
  [[nodiscard]] int Supervise() {
    const bool has_deadline = opt_.timeout_sec > 0;
    const Clock::time_point deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(opt_.timeout_sec));
    std::vector<pollfd> fds;
    std::vector<TaggedStream*> streams;
    for (;;) {
      const bool any_child = Reap();
      if (!any_child) break;
      if (!stopping_ && running_ == 0) {
        std::fprintf(stderr, "stratarun: all ranks have exited; stopping the %s they left running\n",
                     Plural(ListChildren().size(), "process").c_str());
        BeginStop();
      }
      if (stopping_) Sweep();

      int timeout_ms = -1;
      if (stopping_) {
        timeout_ms = kSweepIntervalMs;
      } else if (has_deadline) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
        timeout_ms = static_cast<int>(std::clamp<decltype(left)>(left, 0, INT_MAX));
      }
      fds.assign(1, pollfd{g_signal_pipe[0], POLLIN, 0});
      streams.assign(1, nullptr);
      for (Rank& r : ranks_) {
        for (TaggedStream* s : {&r.out, &r.err}) {
          if (s->fd < 0) continue;
          fds.push_back(pollfd{s->fd, POLLIN, 0});
          streams.push_back(s);
        }
      }
      if (poll(fds.data(), fds.size(), timeout_ms) > 0) {
        if (fds[0].revents != 0) HandleSignals();
        for (size_t i = 1; i < fds.size(); ++i) {
          if (fds[i].revents != 0) ReadStream(streams[i]);
        }
      }
      if (!stopping_ && has_deadline && Clock::now() >= deadline) {
        std::fprintf(stderr, "stratarun: timeout of %g s expired; stopping the %s\n", opt_.timeout_sec,
                     Plural(running_, "running rank").c_str());
        exit_code_ = 124;
        BeginStop();
      }
    }
    // All writers are gone; take what is left without waiting on anyone who escaped us.
    for (Rank& r : ranks_) {
      for (TaggedStream* s : {&r.out, &r.err}) {
        while (s->fd >= 0 && ReadStream(s)) {
        }
        if (s->fd >= 0) CloseStream(s);
      }
    }
    return exit_code_;
  }

  // Reaps every exited child; returns whether any child is left.
  [[nodiscard]] bool Reap() {
    for (;;) {
      int status = 0;
      pid_t pid = waitpid(-1, &status, WNOHANG);
      if (pid == 0) return true;
      if (pid < 0) {
        if (errno == EINTR) continue;
        return false;  // ECHILD.
      }
      auto it = rank_of_pid_.find(pid);
      if (it == rank_of_pid_.end()) continue;  // An adopted orphan.
      const int rank = it->second;
      rank_of_pid_.erase(it);  // The pid may come back as someone else.
      // A rank killed during init leaves its shared-memory segment behind; nobody else will remove it.
      strata::RemoveSegmentsOfProcess(pid);
      ranks_[rank].running = false;
      --running_;
      if (status != 0 && !stopping_) {
        std::fprintf(stderr, "stratarun: rank %d (pid %d) %s", rank, static_cast<int>(pid),
                     DescribeStatus(status).c_str());
        if (running_ > 0) std::fprintf(stderr, "; stopping the other %s", Plural(running_, "rank").c_str());
        std::fprintf(stderr, "\n");
        exit_code_ = ExitCodeOf(status);
        BeginStop();
      }
    }
  }

  void BeginStop() {
    stopping_ = true;
    kill_deadline_ = Clock::now() + kKillGrace;
    for (Rank& r : ranks_) {
      if (!r.running || r.term_sent) continue;
      kill(r.pid, SIGTERM);
      r.term_sent = true;
    }
  }

  // SIGTERMs orphans the ranks left behind, and after the grace period SIGKILLs whatever remains.
  void Sweep() {
    const bool past_grace = Clock::now() >= kill_deadline_;
    std::vector<pid_t> children = ListChildren();
    if (past_grace && !kill_sent_) {
      kill_sent_ = true;
      if (!children.empty()) {
        std::fprintf(stderr, "stratarun: %s still alive %lld s after SIGTERM; sending SIGKILL\n",
                     Plural(children.size(), "process").c_str(), static_cast<long long>(kKillGrace.count()));
      }
      for (Rank& r : ranks_) {
        if (r.running) kill(r.pid, SIGKILL);
      }
    }
    for (pid_t pid : children) {
      if (rank_of_pid_.count(pid) != 0) continue;  // Ranks are handled above and in BeginStop.
      if (past_grace) {
        kill(pid, SIGKILL);  // Our unreaped child, so the pid cannot have been reused.
      } else if (orphans_termed_.insert(pid).second) {
        kill(pid, SIGTERM);
      }
    }
  }

  void HandleSignals() {
    unsigned char buf[256];
    ssize_t n;
    while ((n = read(g_signal_pipe[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
      for (ssize_t i = 0; i + 1 < n; i += 2) {
        if (buf[i] != SIGCHLD) Forward(buf[i], buf[i + 1] != 0);
      }
    }
  }

  void Forward(int sig, bool from_tty) {
    size_t sent = 0;
    size_t from_terminal = 0;
    for (Rank& r : ranks_) {
      if (!r.running) continue;
      // The tty already delivered it to ranks in our process group; a second SIGINT can break their cleanup.
      if (from_tty && (sig == SIGINT || sig == SIGQUIT) && getpgid(r.pid) == getpgrp()) {
        ++from_terminal;
        continue;
      }
      kill(r.pid, sig);
      if (sig == SIGTERM) r.term_sent = true;
      ++sent;
    }
    std::fprintf(stderr, "stratarun: received signal %d (%s); %s\n", sig, strsignal(sig),
                 from_terminal > 0 ? "the ranks got it from the terminal too"
                                   : ("forwarded to " + Plural(sent, "rank")).c_str());
  }

  // Reads once; returns whether the stream may have more to read right now.
  bool ReadStream(TaggedStream* s) {
    char buf[65536];
    ssize_t n = read(s->fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) return true;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return false;
    }
    if (n <= 0) {
      CloseStream(s);
      return false;
    }
    s->pending.append(buf, static_cast<size_t>(n));
    const std::string prefix = "[" + std::to_string(s->rank) + "] ";
    std::string text;
    size_t start = 0;
    for (size_t nl; (nl = s->pending.find('\n', start)) != std::string::npos; start = nl + 1) {
      text += prefix;
      text.append(s->pending, start, nl + 1 - start);
    }
    s->pending.erase(0, start);
    if (s->pending.size() >= kMaxPendingLine) {
      text += prefix + s->pending + "\n";
      s->pending.clear();
    }
    WriteAll(s->target_fd, text);
    return true;
  }

  void CloseStream(TaggedStream* s) {
    if (!s->pending.empty()) WriteAll(s->target_fd, "[" + std::to_string(s->rank) + "] " + s->pending + "\n");
    s->pending.clear();
    close(s->fd);
    s->fd = -1;
  }

  void WriteAll(int fd, const std::string& text) {
    size_t done = 0;
    while (done < text.size()) {
      ssize_t n = write(fd, text.data() + done, text.size() - done);
      if (n > 0) {
        done += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {  // Someone made our stdout non-blocking.
        pollfd p{fd, POLLOUT, 0};
        poll(&p, 1, -1);
      } else {
        return;  // Reader gone (EPIPE): the output has nowhere to go.
      }
    }
  }

  struct SavedAction {
    int sig;
    struct sigaction action;
  };

  const Options opt_;
  std::string secret_;
  int listen_fd_ = -1;
  int port_ = 0;
  rlimit original_nofile_{};
  std::vector<int> cpus_;  // CPUs to pin ranks to, in order; empty: no pinning
  sigset_t original_mask_{};
  sigset_t handled_{};
  std::vector<SavedAction> saved_actions_;
  std::vector<Rank> ranks_;
  std::unordered_map<pid_t, int> rank_of_pid_;
  std::set<pid_t> orphans_termed_;
  size_t running_ = 0;
  bool stopping_ = false;
  bool kill_sent_ = false;
  Clock::time_point kill_deadline_{};
  int exit_code_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  std::string error;
  switch (ParseOptions(argc, argv, &options, &error)) {
    case ParseResult::kHelp:
      std::fputs(kUsage, stdout);
      return 0;
    case ParseResult::kError:
      std::fprintf(stderr, "stratarun: %s\n\n%s", error.c_str(), kUsage);
      return 2;
    case ParseResult::kRun:
      break;
  }
  Launcher launcher(std::move(options));
  return launcher.Run();
}
