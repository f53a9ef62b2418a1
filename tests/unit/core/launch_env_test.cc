// Where rank 0's bootstrap root listens when a launcher publishes no address (mpirun or srun on one
// host): a port derived from the job id, below the kernel's ephemeral range, and a clear error naming
// STRATA_ROOT_ADDR when another program holds it.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "core/launch_env.h"
#include "strata/strata.h"

namespace strata {
namespace {

// Only Open MPI's variables describe the launch while a test runs.
class MpirunEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* v : {"STRATA_RANK", "STRATA_NRANKS", "STRATA_ROOT_ADDR", "STRATA_SECRET", "RANK", "WORLD_SIZE",
                          "SLURM_PROCID", "OMPI_MCA_ess_base_jobid"})
      unsetenv(v);
    setenv("OMPI_COMM_WORLD_RANK", "0", 1);
    setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
    setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "1", 1);
  }
  void TearDown() override {
    for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                          "PMIX_NAMESPACE"})
      unsetenv(v);
  }
};

int EphemeralLow() {
  int low = 0, high = 0;
  FILE* f = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
  if (f == nullptr) return 32768;
  if (fscanf(f, "%d %d", &low, &high) != 2) low = 32768;
  fclose(f);
  return low;
}

TEST_F(MpirunEnv, DerivedPortLiesBelowTheEphemeralRangeAndSpreads) {
  const int low = EphemeralLow();
  if (low < 2024) GTEST_SKIP() << "ip_local_port_range starts at " << low << ": no room below it";
  std::set<int> ports;
  for (int job = 0; job < 500; ++job) {
    setenv("PMIX_NAMESPACE", ("prterun-host-" + std::to_string(1000 + job) + "@1").c_str(), 1);
    LaunchEnv env;
    ASSERT_TRUE(ReadLaunchEnv(&env).ok());
    EXPECT_TRUE(env.rootDerived);
    EXPECT_EQ(env.root.ip, htonl(INADDR_LOOPBACK));
    EXPECT_GE(env.root.port, 1024) << env.rootText;
    EXPECT_LT(env.root.port, low) << env.rootText;
    ports.insert(env.root.port);
    // Every rank of the job derives the same address.
    LaunchEnv again;
    ASSERT_TRUE(ReadLaunchEnv(&again).ok());
    EXPECT_EQ(again.rootText, env.rootText);
  }
  EXPECT_GT(ports.size(), 450u) << "500 job ids landed on only " << ports.size() << " ports";
}

TEST_F(MpirunEnv, AnAddressGivenIsNotDerived) {
  setenv("STRATA_ROOT_ADDR", "127.0.0.1:23456", 1);
  LaunchEnv env;
  ASSERT_TRUE(ReadLaunchEnv(&env).ok());
  EXPECT_FALSE(env.rootDerived);
  EXPECT_EQ(env.root.port, 23456);
  unsetenv("STRATA_ROOT_ADDR");
}

TEST_F(MpirunEnv, ATakenDerivedPortFailsInitWithTheRemedy) {
  setenv("PMIX_NAMESPACE", "prterun-host-taken@1", 1);
  LaunchEnv env;
  ASSERT_TRUE(ReadLaunchEnv(&env).ok());
  // Another program listens on the port the job id leads to, on every address.
  int s = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_ANY);
  sa.sin_port = htons(static_cast<uint16_t>(env.root.port));
  if (bind(s, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 || listen(s, 1) != 0) {
    close(s);
    GTEST_SKIP() << "port " << env.root.port << " is already taken here";
  }
  strataComm_t comm = nullptr;
  EXPECT_NE(strataCommInitFromEnv(&comm, nullptr), strataSuccess);
  EXPECT_EQ(comm, nullptr);
  const std::string why = strataGetLastError(nullptr);
  EXPECT_NE(why.find("STRATA_ROOT_ADDR"), std::string::npos) << why;
  EXPECT_NE(why.find(std::to_string(env.root.port)), std::string::npos) << why;
  EXPECT_NE(why.find("mpirun"), std::string::npos) << why;
  close(s);
}

}  // namespace
}  // namespace strata
