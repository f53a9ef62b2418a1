// Rank, size and rendezvous address from whichever launcher started the process: stratarun
// (STRATA_*), torchrun (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), Open MPI (OMPI_COMM_WORLD_*)
// or Slurm (SLURM_PROCID, SLURM_NTASKS).
#pragma once

#include <string>

#include "core/bootstrap.h"
#include "core/status.h"

namespace strata {

struct LaunchEnv {
  std::string launcher;  // "stratarun", "torchrun", "mpirun", "slurm"
  int rank = -1;
  int nranks = -1;
  int localRank = -1;
  std::string rootText;  // host:port
  SockAddr root;
  int rootFd = -1;       // inherited listening socket (rank 0 under stratarun)
  bool rootDerived = false;  // the port was derived from the job id (mpirun, srun on one host)
  uint8_t secret[kSecretBytes] = {};
};

Status ReadLaunchEnv(LaunchEnv* env);

}  // namespace strata
