#include "transport/shm/shm_segment.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace strata {

ShmSegment::~ShmSegment() {
  unlink();
  if (base_) munmap(base_, size_);
}

Status ShmSegment::create(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) return MakeSysError(errno, "shm_open(%s) failed", name.c_str());
  name_ = name;
  owner_ = true;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    int err = errno;
    close(fd);
    unlink();
    return MakeSysError(err, "ftruncate of shared memory %s to %zu bytes failed (is /dev/shm full?)", name.c_str(),
                        bytes);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    unlink();
    return MakeSysError(err, "mmap of shared memory %s (%zu bytes) failed", name.c_str(), bytes);
  }
  base_ = p;
  size_ = bytes;
  return Status::Ok();
}

Status ShmSegment::open(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) return MakeSysError(errno, "shm_open(%s) of a peer's segment failed", name.c_str());
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    return MakeError(strataInternalError, "peer segment %s has %lld bytes, expected %zu", name.c_str(),
                     static_cast<long long>(st.st_size), bytes);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);
  if (p == MAP_FAILED) return MakeSysError(err, "mmap of peer segment %s failed", name.c_str());
  name_ = name;
  base_ = p;
  size_ = bytes;
  return Status::Ok();
}

void ShmSegment::unlink() {
  if (owner_) {
    shm_unlink(name_.c_str());
    owner_ = false;
  }
}

namespace {
std::string ProcessPrefix(pid_t pid) { return "strata-" + std::to_string(static_cast<long long>(pid)) + "-"; }
}  // namespace

std::string ShmSegmentName(pid_t pid, uint64_t counter, uint64_t tag) {
  char tail[64];
  snprintf(tail, sizeof(tail), "%" PRIu64 "-%016" PRIx64, counter, tag);
  return "/" + ProcessPrefix(pid) + tail;
}

std::vector<std::string> RemoveSegmentsOfProcess(pid_t pid) {
  std::vector<std::string> removed;
  const std::string prefix = ProcessPrefix(pid);
  DIR* dir = opendir("/dev/shm");
  if (!dir) return removed;
  while (const dirent* e = readdir(dir)) {
    if (strncmp(e->d_name, prefix.c_str(), prefix.size()) != 0) continue;
    if (shm_unlink(("/" + std::string(e->d_name)).c_str()) == 0) removed.push_back(e->d_name);
  }
  closedir(dir);
  return removed;
}

}  // namespace strata
