#include <new>

#include "transport/connection.h"

namespace strata {

namespace {
constexpr size_t kPage = 4096;
size_t RoundUp(size_t x, size_t a) { return (x + a - 1) / a * a; }
}  // namespace

size_t SlotFifo::BytesFor(int nslots, size_t slotBytes) {
  return RoundUp(sizeof(FifoCtrl), kPage) + static_cast<size_t>(nslots) * RoundUp(slotBytes, kPage);
}

SlotFifo SlotFifo::At(void* base, int nslots, size_t slotBytes) {
  SlotFifo f;
  f.ctrl = static_cast<FifoCtrl*>(base);
  f.slots = static_cast<char*>(base) + RoundUp(sizeof(FifoCtrl), kPage);
  f.nslots = nslots;
  f.slotBytes = RoundUp(slotBytes, kPage);
  return f;
}

}  // namespace strata
