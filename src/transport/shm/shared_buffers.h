// Host buffers that the ranks of one host map into each other (strataMemAlloc). Each is a memfd of its own, mapped
// shared: a peer maps the same pages once (it opens /proc/<pid>/fd/<fd> of the owner) and then reads and writes them
// with ordinary loads and stores, where cross-memory attach pays the kernel's page pinning on every call.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "core/status.h"

namespace strata {

// One strataMemAlloc buffer as its owner maps it.
struct SharedRegion {
  uint64_t id = 0;  // unique within the owner's process, from 1
  int fd = -1;      // the memfd, open in the owner's process
  uint64_t base = 0;
  uint64_t bytes = 0;  // the buffer's size as asked (the mapping is rounded up to whole pages)
};

Status AllocateSharedBuffer(size_t bytes, void** ptr);
// Unmaps and closes a buffer from AllocateSharedBuffer; `ptr` must be the pointer it gave.
Status FreeSharedBuffer(void* ptr);
// The buffer holding `ptr`, if any (the lookup of every call that publishes its buffers to its peers).
bool FindSharedBuffer(const void* ptr, SharedRegion* out);
// How many buffers this process has freed: a peer that sees the count change drops its mappings of the owner's
// buffers that are no longer published.
uint64_t SharedBufferFrees();

// A peer's view of an owner's buffer: `base` in this process, or nullptr where it could not be mapped.
struct MappedRegion {
  uint64_t id = 0;
  char* base = nullptr;
  uint64_t bytes = 0;
};
// Maps the owner's buffer `region` (as the owner published it) from process `pid`; the error says why not.
Status MapPeerSharedBuffer(pid_t pid, const SharedRegion& region, MappedRegion* out);
void UnmapPeerSharedBuffer(MappedRegion* region);

}  // namespace strata
