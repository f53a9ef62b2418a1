#include "core/launch_env.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/config.h"
#include "core/log.h"

namespace strata {

namespace {
uint64_t Fnv1a(const std::string& s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

bool ParseInt(const std::string& s, int* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  long v = strtol(s.c_str(), &end, 10);
  if (*end != '\0') return false;
  *out = static_cast<int>(v);
  return true;
}

Status RequireInt(const char* name, int* out) {
  STRATA_REQUIRE(ParseInt(LauncherEnv(name), out), strataInvalidArgument, "%s is '%s', not an integer", name,
                 LauncherEnv(name).c_str());
  return Status::Ok();
}

// The lowest port the kernel hands to connect() and bind(port 0): ip_local_port_range.
int EphemeralPortLow() {
  int low = 32768, high = 60999;
  if (FILE* f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    if (fscanf(f, "%d %d", &low, &high) != 2) low = 32768;
    fclose(f);
  }
  return low;
}

// A port both ranks derive from the job's identity, for launchers that publish no address. It is
// drawn below the ephemeral range: every connection on the machine (and each one for a minute
// after it closes, in TIME_WAIT) holds a port from that range, which bind() would then refuse.
std::string DerivedLocalRoot(const std::string& jobKey) {
  const int low = EphemeralPortLow();
  int span = std::min(20000, low - 1024), base = low - span;
  if (span < 1000) span = 20000, base = 30000;  // no room below it: take our chances above
  uint64_t h = Fnv1a(jobKey, 7);  // job ids differ in a few digits: mix every bit into the low ones
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return "127.0.0.1:" + std::to_string(base + static_cast<int>(h % span));
}

Status ParseSecret(const std::string& hex, uint8_t* out) {
  STRATA_REQUIRE(hex.size() >= 2 * kSecretBytes, strataInvalidArgument,
                 "STRATA_SECRET must be at least %d hex characters", 2 * kSecretBytes);
  for (int i = 0; i < kSecretBytes; ++i) {
    unsigned v = 0;
    STRATA_REQUIRE(sscanf(hex.c_str() + 2 * i, "%2x", &v) == 1, strataInvalidArgument,
                   "STRATA_SECRET is not hexadecimal");
    out[i] = static_cast<uint8_t>(v);
  }
  return Status::Ok();
}
}  // namespace

Status ReadLaunchEnv(LaunchEnv* env) {
  std::string jobKey;
  if (ConfigIsSet("STRATA_RANK") || ConfigIsSet("STRATA_NRANKS")) {
    env->launcher = "stratarun";
    STRATA_CHECK(RequireInt("STRATA_RANK", &env->rank));
    STRATA_CHECK(RequireInt("STRATA_NRANKS", &env->nranks));
    env->localRank = static_cast<int>(ConfigInt("STRATA_LOCAL_RANK"));
    env->rootText = ConfigString("STRATA_ROOT_ADDR");
    STRATA_REQUIRE(!env->rootText.empty(), strataInvalidArgument,
                   "STRATA_RANK is set but STRATA_ROOT_ADDR (host:port where rank 0 listens) is not");
    env->rootFd = static_cast<int>(ConfigInt("STRATA_ROOT_FD"));
  } else if (!LauncherEnv("RANK").empty() && !LauncherEnv("WORLD_SIZE").empty()) {
    env->launcher = "torchrun";
    STRATA_CHECK(RequireInt("RANK", &env->rank));
    STRATA_CHECK(RequireInt("WORLD_SIZE", &env->nranks));
    ParseInt(LauncherEnv("LOCAL_RANK"), &env->localRank);
    int port = 0;
    STRATA_REQUIRE(!LauncherEnv("MASTER_ADDR").empty() && ParseInt(LauncherEnv("MASTER_PORT"), &port),
                   strataInvalidArgument, "RANK/WORLD_SIZE are set but MASTER_ADDR/MASTER_PORT are not");
    // MASTER_PORT itself belongs to torch's store; strata's root takes the next port.
    env->rootText = ConfigIsSet("STRATA_ROOT_ADDR") ? ConfigString("STRATA_ROOT_ADDR")
                                                    : LauncherEnv("MASTER_ADDR") + ":" + std::to_string(port + 1);
    jobKey = LauncherEnv("TORCHELASTIC_RUN_ID");
  } else if (!LauncherEnv("OMPI_COMM_WORLD_RANK").empty()) {
    env->launcher = "mpirun";
    STRATA_CHECK(RequireInt("OMPI_COMM_WORLD_RANK", &env->rank));
    STRATA_CHECK(RequireInt("OMPI_COMM_WORLD_SIZE", &env->nranks));
    ParseInt(LauncherEnv("OMPI_COMM_WORLD_LOCAL_RANK"), &env->localRank);
    jobKey = LauncherEnv("PMIX_NAMESPACE") + LauncherEnv("OMPI_MCA_ess_base_jobid");
    int localSize = -1;
    ParseInt(LauncherEnv("OMPI_COMM_WORLD_LOCAL_SIZE"), &localSize);
    if (ConfigIsSet("STRATA_ROOT_ADDR")) env->rootText = ConfigString("STRATA_ROOT_ADDR");
    else if (localSize == env->nranks) env->rootText = DerivedLocalRoot(jobKey), env->rootDerived = true;
    else
      return MakeError(strataInvalidArgument,
                       "mpirun across hosts: set STRATA_ROOT_ADDR=host:port of rank 0 (or use strataCommInitFromMPI)");
  } else if (!LauncherEnv("SLURM_PROCID").empty()) {
    env->launcher = "slurm";
    STRATA_CHECK(RequireInt("SLURM_PROCID", &env->rank));
    STRATA_CHECK(RequireInt("SLURM_NTASKS", &env->nranks));
    ParseInt(LauncherEnv("SLURM_LOCALID"), &env->localRank);
    jobKey = LauncherEnv("SLURM_JOB_ID") + "." + LauncherEnv("SLURM_STEP_ID");
    int nnodes = 1;
    ParseInt(LauncherEnv("SLURM_STEP_NUM_NODES"), &nnodes);
    if (ConfigIsSet("STRATA_ROOT_ADDR")) env->rootText = ConfigString("STRATA_ROOT_ADDR");
    else if (!LauncherEnv("MASTER_ADDR").empty() && !LauncherEnv("MASTER_PORT").empty())
      env->rootText = LauncherEnv("MASTER_ADDR") + ":" + LauncherEnv("MASTER_PORT");
    else if (nnodes == 1) env->rootText = DerivedLocalRoot(jobKey), env->rootDerived = true;
    else
      return MakeError(strataInvalidArgument, "srun across hosts: set STRATA_ROOT_ADDR=host:port of rank 0");
  } else {
    return MakeError(strataInvalidArgument,
                     "no launcher found in the environment: start the program with stratarun, mpirun, srun or "
                     "torchrun, or set STRATA_RANK, STRATA_NRANKS and STRATA_ROOT_ADDR");
  }
  STRATA_REQUIRE(env->nranks >= 1, strataInvalidArgument, "the launcher says there are %d ranks", env->nranks);
  STRATA_REQUIRE(env->rank >= 0 && env->rank < env->nranks, strataInvalidArgument,
                 "the launcher says this is rank %d of %d", env->rank, env->nranks);
  STRATA_CHECK(ParseHostPort(env->rootText, &env->root));
  if (ConfigIsSet("STRATA_SECRET")) {
    STRATA_CHECK(ParseSecret(ConfigString("STRATA_SECRET"), env->secret));
  } else {
    // No secret was handed out: derive one every rank of this job computes alike.
    const std::string key = env->rootText + "|" + jobKey + "|" + std::to_string(env->nranks);
    uint64_t a = Fnv1a(key, 1), b = Fnv1a(key, 2);
    memcpy(env->secret, &a, 8);
    memcpy(env->secret + 8, &b, 8);
  }
  STRATA_LOG(INFO, ENV, "launched by %s: rank %d of %d, root %s", env->launcher.c_str(), env->rank, env->nranks,
             env->rootText.c_str());
  return Status::Ok();
}

}  // namespace strata
