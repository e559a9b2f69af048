// A capture's event memory: one reservation carved into fixed blocks that
// threads claim with a single atomic add. Bounded by design: when the blocks
// run out, callers drop and count.
#ifndef NEURONPROF_SRC_CORE_EVENT_POOL_H_
#define NEURONPROF_SRC_CORE_EVENT_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/statusor.h"
#include "neuronprof/internal/recorder.h"

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

}  // namespace internal

namespace core {

class EventPool {
 public:
  // Reserves `bytes` (rounded down to whole blocks, at least one) of
  // address space. The first pages are committed now; a background thread
  // commits more ahead of the claimed blocks, so that first-touch page
  // faults (microseconds each on a VM) do not land on recording threads.
  static absl::StatusOr<std::unique_ptr<EventPool>> Create(uint64_t bytes,
                                                           uint32_t generation);
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // A zero-filled block, or nullptr when the pool is exhausted. Lock-free.
  void* ClaimBlock() {
    const uint64_t index = next_block_.fetch_add(1, std::memory_order_relaxed);
    if (index >= num_blocks_) return nullptr;
    return base_ + index * internal::EventBlock::kBytes;
  }

  uint32_t generation() const { return generation_; }
  uint64_t capacity_bytes() const {
    return num_blocks_ * internal::EventBlock::kBytes;
  }
  uint64_t used_bytes() const;
  // Whether `address` lies in this pool's reservation.
  bool Contains(const void* address) const {
    const char* p = static_cast<const char*>(address);
    return p >= base_ && p < base_ + capacity_bytes();
  }

  // Ends the background commits (idempotent; also done by the destructor).
  void StopPrefaulting();

 private:
  EventPool(char* base, uint64_t num_blocks, uint32_t generation)
      : base_(base), num_blocks_(num_blocks), generation_(generation) {}
  void PrefaultLoop(uint64_t committed_bytes);

  char* base_;
  uint64_t num_blocks_;
  uint32_t generation_;
  std::atomic<uint64_t> next_block_{0};

  std::mutex prefault_mutex_;
  std::condition_variable prefault_wakeup_;
  bool prefault_stop_ = false;
  std::thread prefaulter_;
};

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_EVENT_POOL_H_
