// A capture's event memory: one reservation carved into fixed blocks that
// threads claim with a single atomic add. Bounded by design: when the blocks
// run out, callers drop and count.
#ifndef NEURONPROF_SRC_CORE_EVENT_POOL_H_
#define NEURONPROF_SRC_CORE_EVENT_POOL_H_

#include <semaphore.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "neuronprof/internal/recorder.h"
#include "src/core/result.h"

namespace neuronprof {
namespace internal {

// A block of event records; the first 32 bytes link the thread's chain.
struct EventBlock {
  static constexpr size_t kBytes = 64 * 1024;
  static constexpr size_t kRecords = kBytes / sizeof(EventRecord) - 1;
  EventBlock* next;
  char padding[sizeof(EventRecord) - sizeof(EventBlock*)];
  EventRecord records[kRecords];
};
static_assert(sizeof(EventBlock) == EventBlock::kBytes, "block layout");

// In a ring (flight recorder) pool the first 32 bytes of every block hold
// this header instead of EventBlock::next. `state` is the only field two
// threads race on (and `kind`, atomic for a snapshot's estimate of its
// copy before the freeze); the others are written by the block's claimer
// inside its write section and read by a snapshot only while claims are
// frozen (see src/core/recorder.cc, "Ring mode").
struct RingBlockHeader {
  enum State : uint32_t { kFree = 0, kRetired = 1, kCurrent = 2 };
  enum Kind : uint32_t { kRecords = 1, kNames = 2 };
  std::atomic<uint32_t> state;  // kCurrent: some thread writes into it.
  std::atomic<uint32_t> kind;   // Kind; relaxed.
  uint64_t ticket;              // Claim number: orders a thread's blocks by age.
  uint64_t claim_ticks;         // NowTicks() when claimed; names written later.
  const void* owner;            // The ThreadSlot that claimed it.
};
static_assert(sizeof(RingBlockHeader) == sizeof(EventRecord),
              "the ring header takes the place of EventBlock::next");

}  // namespace internal

namespace core {

class EventPool {
 public:
  // Reserves `bytes` (rounded down to whole blocks, at least one) of
  // address space. The first pages are committed now; a background thread
  // commits more ahead of the claimed blocks, so that first-touch page
  // faults (microseconds each on a VM) do not land on recording threads.
  // `ring`: blocks are recycled (ClaimRingBlock) instead of running out,
  // and all of them are committed now, with no background thread.
  static Result<std::unique_ptr<EventPool>> Create(uint64_t bytes, uint32_t generation,
                                                   bool ring = false);
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // A zero-filled block, or nullptr when the pool is exhausted. Lock-free.
  void* ClaimBlock() {
    const uint64_t index = next_block_.fetch_add(1, std::memory_order_relaxed);
    if (index >= num_blocks_) return nullptr;
    if (index % kPrefaultStepBlocks == 0) WakePrefaulter();
    return base_ + index * internal::EventBlock::kBytes;
  }

  // Ring mode: the next block that is neither some thread's current block
  // nor claimable during a snapshot, taken with one CAS on its header
  // (kFree/kRetired -> kCurrent); the ring's order is the claim counter's,
  // so the block taken is the oldest one not in use. nullptr while a
  // snapshot has frozen claims or when every block is in use. Lock-free;
  // called at a block switch, inside the caller's write section.
  internal::RingBlockHeader* ClaimRingBlock();
  // A snapshot's freeze: while set, ClaimRingBlock fails (callers drop and
  // count), so no block changes hands while it is read.
  void set_frozen(bool frozen) { frozen_.store(frozen, std::memory_order_seq_cst); }
  bool frozen() const { return frozen_.load(std::memory_order_acquire); }
  internal::RingBlockHeader* ring_header(uint64_t index) const {
    return reinterpret_cast<internal::RingBlockHeader*>(base_ +
                                                        index * internal::EventBlock::kBytes);
  }
  // The block that holds `address` (which Contains()).
  char* BlockOf(const void* address) const {
    const uint64_t offset = static_cast<uint64_t>(static_cast<const char*>(address) - base_);
    return base_ + offset / internal::EventBlock::kBytes * internal::EventBlock::kBytes;
  }
  uint64_t num_blocks() const { return num_blocks_; }
  bool ring() const { return ring_; }

  uint32_t generation() const { return generation_; }
  uint64_t capacity_bytes() const { return num_blocks_ * internal::EventBlock::kBytes; }
  uint64_t used_bytes() const;
  // Ring mode: whether blocks have been claimed more often than there are
  // blocks, so that older records were overwritten.
  bool recycled() const { return next_block_.load(std::memory_order_relaxed) > num_blocks_; }
  // Whether `address` lies in this pool's reservation.
  bool Contains(const void* address) const {
    const char* p = static_cast<const char*>(address);
    return p >= base_ && p < base_ + capacity_bytes();
  }

  // Ends the background commits (idempotent; also done by the destructor).
  void StopPrefaulting();

  // The background thread commits this much at a time; claims wake it
  // once per step instead of it polling.
  static constexpr uint64_t kPrefaultStepBytes = uint64_t{4} << 20;
  static constexpr uint64_t kPrefaultStepBlocks = kPrefaultStepBytes / internal::EventBlock::kBytes;
  // The background thread's name in the OS (15 bytes at most).
  static constexpr char kPrefaultThreadName[] = "neuronprof_pool";

 private:
  EventPool(char* base, uint64_t num_blocks, uint32_t generation, bool ring);
  void PrefaultLoop(uint64_t committed_bytes);
  // A claim crossed a step: sem_post, which never blocks or locks.
  void WakePrefaulter();

  char* base_;
  uint64_t num_blocks_;
  uint32_t generation_;
  bool ring_;
  std::atomic<uint64_t> next_block_{0};
  std::atomic<bool> frozen_{false};

  sem_t prefault_wakeup_;
  std::atomic<bool> prefault_stop_{false};
  bool has_prefaulter_ = false;  // Set before the pool is shared; then constant.
  std::thread prefaulter_;
};

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_EVENT_POOL_H_
