// SlotStoreTuner: how a rank writes the shared-memory slots its peers read, chosen call by call.
//
// Ordinary stores leave the data in the writer's cache, from where the reader's core fetches it; streaming
// (non-temporal) stores send it to memory, from where the reader loads it. Which is faster depends on how the
// machine passes written lines between cores, and on a VM that changes while a job runs: on the 2-vCPU EPYC
// development VM a two-process FIFO of 8 slots of 128 KiB, passing 8 MiB at a time, moved 30-35 GB/s with
// ordinary stores and 9-12 with streaming ones for a while, then 7 and 20-21 GB/s for minutes
// (perf/slot_store_probe; docs/PERFORMANCE.md, "Slot stores"). So the
// tuner times the calls of each size class in the mode in use, tries the other mode now and then (more
// rarely while it keeps losing) and at once when the mode in use has slowed down, and keeps the faster.
//
// A rank decides alone: the mode changes how the data travels, never what arrives, so ranks need not agree. Within
// a process, every communicator left at auto shares one tuner (Shared()): what it measures is the machine's (while
// each had a tuner of its own, two communicators of one job ran the same algorithm at up to 2x each other's time).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

namespace strata {

enum class SlotStores { kAuto, kCached, kStreaming };
// "auto", "cached", "streaming" (STRATA_SLOT_STORES); false for anything else.
bool ParseSlotStores(const char* text, SlotStores* out);
const char* SlotStoresName(SlotStores stores);

class SlotStoreTuner {
 public:
  // Calls writing fewer shared-slot bytes than this always use ordinary stores: latency dominates them.
  static constexpr uint64_t kMinBytes = uint64_t{64} << 10;
  // The other mode is tried at a class's second timed call, then again after twice as many timed calls each
  // time it loses (128, then kMaxInterval); after a switch, first after kFirstInterval. Each try of the slower
  // mode costs a call at its speed (2-3x slower on the VM: with one such call among its 20 timed calls,
  // all_reduce_perf at 4 MiB averaged 288-294 us in three launches; forced streaming, 257 a minute later), so the
  // periodic tries are rare and the turns of the machine are caught by the slowdown check below; it also undoes a
  // switch made on a lucky sample.
  static constexpr int kFirstInterval = 64;
  static constexpr int kMaxInterval = 256;
  // The mode in use has slowed down when its recent calls (the faster of the last two) take this much
  // longer per byte than when it was last chosen: the other mode is tried at the next call.
  static constexpr double kSlowdown = 1.5;
  // The other mode must be this much faster than the one in use to replace it, in two tries in a row: one try
  // alone could let a moment's noise decide a size for a whole job. (With a call of the mode in use between the
  // two, that call fell among all_reduce_perf's timed calls: 1.03-1.19x the forced faster mode's time at 1-16 MiB
  // in the VM's slow state, batch S7 of docs/PERFORMANCE.md.)
  static constexpr double kMargin = 1.1;

  explicit SlotStoreTuner(SlotStores policy = SlotStores::kAuto) : policy_(policy) {}
  SlotStoreTuner(const SlotStoreTuner&) = delete;
  SlotStoreTuner& operator=(const SlotStoreTuner&) = delete;

  // The process's tuner for every communicator at auto. Thread-safe, as every tuner is.
  static SlotStoreTuner& Shared();

  // Whether calls writing `bytes` into shared slots are timed (begin, then end): auto, from kMinBytes. The
  // others need no clock read (8 B on 2 ranks: 0.50-0.56 us with two reads per call, 0.44-0.50 without).
  bool tunes(uint64_t bytes) const { return policy_ == SlotStores::kAuto && bytes >= kMinBytes; }
  // What begin decided for one call.
  struct Call {
    bool streaming = false;  // write the shared slots with streaming stores
    bool trying = false;     // the mode not in use, tried
    bool timed = false;      // its time counts (not a class's first call)
  };
  // The call about to run writes `bytes` into shared slots. A call that tunes() reports its time with end (or
  // nothing when it failed); calls of several communicators may be in flight at once.
  Call begin(uint64_t bytes);
  // That call took `ns` on this rank.
  void end(uint64_t bytes, const Call& call, uint64_t ns);
  // The mode in use for `bytes`, without trying anything: for runs timed outside the calls (the selector's).
  bool current(uint64_t bytes) const;
  // The mode that classes which have not begun a call yet start in (ordinary stores until told): what a
  // communicator's calibration found faster for its 1 MiB ring (CalibrateCostInputs). The timings that follow at init
  // and at a class's first call (current) then run the FIFO algorithms in it, as the class's calls will once the tuner
  // has tried both: on 2 ranks of an AMD EPYC VM, launches whose ring ran 263-310 us at 1 MiB with ordinary stores for
  // the whole launch (65-81 in others, 120-181 with streaming stores) calibrated the ring at 242-307 us (63-162 in
  // others) and chose twoshot there (docs/PERFORMANCE.md, "Twenty-ninth session"). After that, each verdict of a try
  // in any class (a switch, or the mode in use kept) sets it too: the machine turns while a job runs, and a class first
  // called a minute after init is better served by the latest verdict than by the calibration's.
  void startIn(bool streaming);
  // Times a class changed mode, all classes together.
  int switches() const;

 private:
  struct Class {
    bool streaming = false;        // the mode in use
    uint64_t calls = 0;            // begun; the first of a class is not timed (page faults, first touches)
    double recent[3] = {0, 0, 0};  // ns per byte of the mode in use, newest first
    int nRecent = 0;
    double chosenAt = 0;  // its figure when it was last chosen or confirmed
    bool triedOther = false;
    int sinceTry = 0;
    int interval = kFirstInterval;
    bool slowed = false;
    bool won = false;  // the last try beat the mode in use: the next call tries again
  };
  static int ClassOf(uint64_t bytes);
  static double Recent(const Class& c);  // median of the last three, the faster of two, or the one

  const SlotStores policy_;
  mutable std::mutex mu_;
  std::map<int, Class> classes_;  // under mu_
  int switches_ = 0;              // under mu_
  bool startStreaming_ = false;   // under mu_: the mode of classes not yet begun (startIn, the latest verdict)
};

}  // namespace strata
