#include "exec/slot_store_tuner.h"

#include <algorithm>
#include <cstring>

#include "core/log.h"

namespace strata {

bool ParseSlotStores(const char* text, SlotStores* out) {
  for (SlotStores s : {SlotStores::kAuto, SlotStores::kCached, SlotStores::kStreaming}) {
    if (strcmp(text, SlotStoresName(s)) == 0) {
      *out = s;
      return true;
    }
  }
  return false;
}

const char* SlotStoresName(SlotStores stores) {
  switch (stores) {
    case SlotStores::kCached:
      return "cached";
    case SlotStores::kStreaming:
      return "streaming";
    case SlotStores::kAuto:
      break;
  }
  return "auto";
}

namespace {
const char* ModeName(bool streaming) {
  return SlotStoresName(streaming ? SlotStores::kStreaming : SlotStores::kCached);
}
}  // namespace

int SlotStoreTuner::ClassOf(uint64_t bytes) { return 63 - __builtin_clzll(bytes | 1); }

double SlotStoreTuner::Recent(const Class& c) {
  if (c.nRecent == 1) return c.recent[0];
  if (c.nRecent == 2) return std::min(c.recent[0], c.recent[1]);
  return std::max(std::min(c.recent[0], c.recent[1]), std::min(std::max(c.recent[0], c.recent[1]), c.recent[2]));
}

SlotStoreTuner& SlotStoreTuner::Shared() {
  static SlotStoreTuner* const shared = new SlotStoreTuner(SlotStores::kAuto);  // never destroyed: see AllKnobs
  return *shared;
}

SlotStoreTuner::Call SlotStoreTuner::begin(uint64_t bytes) {
  Call call;
  if (!tunes(bytes)) {
    call.streaming = policy_ == SlotStores::kStreaming;
    return call;
  }
  std::lock_guard<std::mutex> lock(mu_);
  const auto [it, added] = classes_.try_emplace(ClassOf(bytes));
  Class& c = it->second;
  if (added) c.streaming = startStreaming_;
  call.timed = ++c.calls > 1;
  call.trying = c.calls > 2 && (!c.triedOther || c.slowed || c.sinceTry >= c.interval || c.won);
  if (call.trying) c.slowed = false, c.sinceTry = 0, c.triedOther = true;  // no second try while this one runs
  call.streaming = call.trying != c.streaming;
  return call;
}

void SlotStoreTuner::end(uint64_t bytes, const Call& call, uint64_t ns) {
  if (!tunes(bytes)) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (!call.timed) return;
  Class& c = classes_[ClassOf(bytes)];
  const double perByte = static_cast<double>(ns) / static_cast<double>(bytes);
  if (call.streaming != c.streaming && !call.trying) return;  // the mode changed while this call ran
  if (!call.trying) {
    std::memmove(c.recent + 1, c.recent, sizeof c.recent - sizeof c.recent[0]);
    c.recent[0] = perByte;
    c.nRecent = std::min(c.nRecent + 1, 3);
    ++c.sinceTry;
    if (c.chosenAt == 0) c.chosenAt = perByte;
    c.slowed = c.nRecent >= 2 && std::min(c.recent[0], c.recent[1]) > kSlowdown * c.chosenAt;
    if (c.slowed)
      STRATA_LOG(TRACE, TUNING, "shared-memory slots of %llu B calls: %s stores slowed to %.3f ns/B from %.3f",
                 static_cast<unsigned long long>(bytes), ModeName(c.streaming), std::min(c.recent[0], c.recent[1]),
                 c.chosenAt);
    return;
  }
  if (call.streaming == c.streaming) return;  // a try of the mode that has taken over meanwhile
  if (c.nRecent == 0) {  // it overtook the first timed call of the mode in use: nothing to compare with yet
    c.triedOther = false;
    return;
  }
  const double inUse = Recent(c);
  const bool faster = perByte * kMargin < inUse;
  if (faster && !c.won) {
    c.won = true;  // confirmed or not by a second try at the next call
    return;
  }
  c.won = false;
  if (faster) {
    c.streaming = !c.streaming;
    c.recent[0] = c.chosenAt = perByte;
    c.nRecent = 1;
    c.interval = kFirstInterval;
    ++switches_;
    STRATA_LOG(INFO, TUNING, "shared-memory slots of %llu B calls: %s stores now (%.3f ns/B, %s %.3f)",
               static_cast<unsigned long long>(bytes), ModeName(c.streaming), perByte, ModeName(!c.streaming), inUse);
  } else {
    c.chosenAt = inUse;
    c.interval = std::min(2 * c.interval, kMaxInterval);
    STRATA_LOG(TRACE, TUNING, "shared-memory slots of %llu B calls: %s stores kept (%.3f ns/B, %s tried at %.3f)",
               static_cast<unsigned long long>(bytes), ModeName(c.streaming), inUse, ModeName(!c.streaming), perByte);
  }
  startStreaming_ = c.streaming;  // the latest verdict, switched or kept: where classes not yet begun start
}

bool SlotStoreTuner::current(uint64_t bytes) const {
  if (!tunes(bytes)) return policy_ == SlotStores::kStreaming;
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = classes_.find(ClassOf(bytes));
  return it != classes_.end() ? it->second.streaming : startStreaming_;
}

void SlotStoreTuner::startIn(bool streaming) {
  std::lock_guard<std::mutex> lock(mu_);
  startStreaming_ = streaming;
}

int SlotStoreTuner::switches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return switches_;
}

}  // namespace strata
