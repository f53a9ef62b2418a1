// slot_store_probe: how fast two processes pass data through a shared-memory slot FIFO when the writer fills
// the slots with ordinary stores (HostCopy) and with streaming stores (HostCopyStreaming), as strata's shared
// memory connections do (STRATA_SLOT_STORES). The reader copies each slot out with HostCopy. No executor, no
// collective: only the machine's way of passing written cache lines between two cores.
//
//   slot_store_probe [-t SECONDS=10] [-s SLOT_BYTES=131072] [-n SLOTS=8]
//
// Prints a line about twice a second: the time, then GB/s (bytes passed / seconds) for passes of 1 MiB and of
// 8 MiB with each kind of store. On the 2-vCPU EPYC development VM the two kinds swap places as the VM moves
// between states (docs/PERFORMANCE.md, "Slot stores").
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "exec/host_reduce.h"
#include "transport/connection.h"

namespace {

double Seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// One writer process and this one as the reader pass `total` bytes `passes` times; returns GB/s.
double Pass(bool streaming, size_t slotBytes, int nslots, size_t total, int passes) {
  static_assert(sizeof(strata::FifoCtrl) <= 4096, "the control block fits the first page");
  const size_t shared = 4096 + slotBytes * nslots;
  void* mem = mmap(nullptr, shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  auto* ctrl = new (mem) strata::FifoCtrl();
  char* slots = static_cast<char*>(mem) + 4096;
  std::memset(slots, 0, slotBytes * nslots);
  std::vector<char> buf(total, 1);
  const uint64_t pieces = total / slotBytes;
  const double t0 = Seconds();
  const pid_t writer = fork();
  if (writer == 0) {
    uint64_t head = 0;
    for (int p = 0; p < passes; ++p)
      for (uint64_t k = 0; k < pieces; ++k, ++head) {
        while (head - ctrl->tail.load(std::memory_order_acquire) >= static_cast<uint64_t>(nslots)) {
        }
        char* slot = slots + (head % nslots) * slotBytes;
        (streaming ? strata::HostCopyStreaming : strata::HostCopy)(slot, buf.data() + k * slotBytes, slotBytes);
        ctrl->head.store(head + 1, std::memory_order_release);
      }
    _exit(0);
  }
  uint64_t tail = 0;
  for (int p = 0; p < passes; ++p)
    for (uint64_t k = 0; k < pieces; ++k, ++tail) {
      while (ctrl->head.load(std::memory_order_acquire) <= tail) {
      }
      strata::HostCopy(buf.data() + k * slotBytes, slots + (tail % nslots) * slotBytes, slotBytes);
      ctrl->tail.store(tail + 1, std::memory_order_release);
    }
  const double seconds = Seconds() - t0;
  waitpid(writer, nullptr, 0);
  munmap(mem, shared);
  return static_cast<double>(total) * passes / seconds / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  double limit = 10;
  size_t slotBytes = 131072;
  int nslots = 8;
  for (int opt; (opt = getopt(argc, argv, "t:s:n:")) != -1;) {
    if (opt == 't')
      limit = atof(optarg);
    else if (opt == 's')
      slotBytes = strtoull(optarg, nullptr, 10);
    else if (opt == 'n')
      nslots = atoi(optarg);
    else {
      fprintf(stderr, "usage: %s [-t SECONDS] [-s SLOT_BYTES] [-n SLOTS]\n", argv[0]);
      return 2;
    }
  }
  if (slotBytes < 4096 || slotBytes > (size_t{1} << 20) || nslots < 2 || nslots > 64 || !(limit > 0)) {
    fprintf(stderr, "slot_store_probe: slots of 4 KiB to 1 MiB, 2-64 of them, a positive time\n");
    return 2;
  }
  printf("# slot FIFO between two processes, %d slots of %zu B; GB/s passing 1 MiB / 8 MiB at a time\n", nslots,
         slotBytes);
  printf("# time      cached 1M  cached 8M  streaming 1M  streaming 8M\n");
  const double end = Seconds() + limit;
  while (Seconds() < end) {
    const time_t now = time(nullptr);
    char stamp[16];
    strftime(stamp, sizeof stamp, "%H:%M:%S", localtime(&now));
    const double c1 = Pass(false, slotBytes, nslots, size_t{1} << 20, 400);
    const double c8 = Pass(false, slotBytes, nslots, size_t{8} << 20, 50);
    const double s1 = Pass(true, slotBytes, nslots, size_t{1} << 20, 400);
    const double s8 = Pass(true, slotBytes, nslots, size_t{8} << 20, 50);
    printf("  %s  %9.1f  %9.1f  %12.1f  %12.1f\n", stamp, c1, c8, s1, s8);
    fflush(stdout);
    usleep(300000);
  }
  return 0;
}
