// strataMemAlloc / strataMemFree: host buffers that the ranks of one host map into each other, so that the
// in-place algorithms reach them with plain loads and stores (transport/shm/shared_buffers.h).
#include "api/comm_handle.h"
#include "transport/shm/shared_buffers.h"

extern "C" {

strataResult_t strataMemAlloc(void** ptr, size_t size) {
  return strata::ReturnStatus(strata::AllocateSharedBuffer(size, ptr));
}

strataResult_t strataMemFree(void* ptr) { return strata::ReturnStatus(strata::FreeSharedBuffer(ptr)); }

}  // extern "C"
