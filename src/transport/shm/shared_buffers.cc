#include "transport/shm/shared_buffers.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

namespace strata {

namespace {

struct Registry {
  std::mutex mu;
  std::map<uint64_t, SharedRegion> byBase;  // keyed by base address
  uint64_t nextId = 1;
  std::atomic<uint64_t> live{0};  // byBase's size, read without the lock: most processes never allocate one
  std::atomic<uint64_t> frees{0};
};

Registry& TheRegistry() {
  static Registry* r = new Registry();  // outlives every static destructor that might still free
  return *r;
}

size_t PageRounded(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

Status AllocateSharedBuffer(size_t bytes, void** ptr) {
  STRATA_REQUIRE(ptr != nullptr, strataInvalidArgument, "strataMemAlloc: the pointer to set is NULL");
  *ptr = nullptr;
  STRATA_REQUIRE(bytes > 0, strataInvalidArgument, "strataMemAlloc: size 0");
  const size_t mapped = PageRounded(bytes);
  STRATA_REQUIRE(mapped >= bytes, strataInvalidArgument, "strataMemAlloc: size %zu is too large", bytes);
  const int fd = memfd_create("strata-buffer", MFD_CLOEXEC);
  if (fd < 0) return MakeError(strataSystemError, "strataMemAlloc: memfd_create failed: %s", strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
    const int err = errno;
    close(fd);
    return MakeError(strataSystemError, "strataMemAlloc: sizing a %zu-byte buffer failed: %s", bytes, strerror(err));
  }
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return MakeError(strataSystemError, "strataMemAlloc: mapping %zu bytes failed: %s", bytes, strerror(err));
  }
  (void)madvise(p, mapped, MADV_HUGEPAGE);  // honoured where shmem_enabled allows it; ordinary pages otherwise
  Registry& reg = TheRegistry();
  std::lock_guard<std::mutex> lock(reg.mu);
  SharedRegion r;
  r.id = reg.nextId++;
  r.fd = fd;
  r.base = reinterpret_cast<uint64_t>(p);
  r.bytes = bytes;
  reg.byBase[r.base] = r;
  reg.live.fetch_add(1, std::memory_order_relaxed);
  *ptr = p;
  return Status::Ok();
}

Status FreeSharedBuffer(void* ptr) {
  if (ptr == nullptr) return Status::Ok();  // as free(NULL)
  Registry& reg = TheRegistry();
  SharedRegion r;
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    auto it = reg.byBase.find(reinterpret_cast<uint64_t>(ptr));
    STRATA_REQUIRE(it != reg.byBase.end(), strataInvalidArgument,
                   "strataMemFree: %p is not a buffer from strataMemAlloc (or was freed already)", ptr);
    r = it->second;
    reg.byBase.erase(it);
    reg.live.fetch_sub(1, std::memory_order_relaxed);
    reg.frees.fetch_add(1, std::memory_order_relaxed);
  }
  munmap(ptr, PageRounded(r.bytes));
  close(r.fd);
  return Status::Ok();
}

bool FindSharedBuffer(const void* ptr, SharedRegion* out) {
  Registry& reg = TheRegistry();
  if (reg.live.load(std::memory_order_relaxed) == 0 || ptr == nullptr) return false;
  const uint64_t at = reinterpret_cast<uint64_t>(ptr);
  std::lock_guard<std::mutex> lock(reg.mu);
  auto it = reg.byBase.upper_bound(at);
  if (it == reg.byBase.begin()) return false;
  --it;
  if (at >= it->second.base + it->second.bytes) return false;
  *out = it->second;
  return true;
}

uint64_t SharedBufferFrees() { return TheRegistry().frees.load(std::memory_order_relaxed); }

Status MapPeerSharedBuffer(pid_t pid, const SharedRegion& region, MappedRegion* out) {
  *out = MappedRegion{};
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/fd/%d", static_cast<int>(pid), region.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return MakeError(strataSystemError, "opening %s failed: %s", path, strerror(errno));
  struct stat st {};
  const size_t mapped = PageRounded(region.bytes);
  if (fstat(fd, &st) != 0 || static_cast<uint64_t>(st.st_size) != mapped) {
    close(fd);
    return MakeError(strataSystemError, "%s is not the %zu-byte buffer published", path, mapped);
  }
  // Populated now: else the first call to reach each page faults on it here (a sweep through a large buffer timed
  // its first pass 1.3-1.6x slower than through cross-memory attach).
  void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return MakeError(strataSystemError, "mapping %s failed: %s", path, strerror(err));
  out->id = region.id;
  out->base = static_cast<char*>(p);
  out->bytes = region.bytes;
  return Status::Ok();
}

void UnmapPeerSharedBuffer(MappedRegion* region) {
  if (region->base) munmap(region->base, PageRounded(region->bytes));
  *region = MappedRegion{};
}

}  // namespace strata
