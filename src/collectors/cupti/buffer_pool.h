// Activity buffers for CUPTI, handed out without locks: CUPTI asks for them
// from the application's own threads (inside kernel launches) and from its
// worker threads, so a request must never wait.
#ifndef NEURONPROF_SRC_COLLECTORS_CUPTI_BUFFER_POOL_H_
#define NEURONPROF_SRC_COLLECTORS_CUPTI_BUFFER_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace cupti {

// `count` buffers of `buffer_bytes` in one reserved mapping (pages cost
// memory only once CUPTI writes them). Each buffer is handed out at most
// once per capture; when all are out, requests are refused and counted.
class ActivityBufferPool {
 public:
  static constexpr size_t kAlignment = 8;  // CUPTI's buffer alignment.

  static absl::StatusOr<std::unique_ptr<ActivityBufferPool>> Create(size_t buffer_bytes,
                                                                    size_t count);
  ~ActivityBufferPool();
  ActivityBufferPool(const ActivityBufferPool&) = delete;
  ActivityBufferPool& operator=(const ActivityBufferPool&) = delete;

  // Any thread, lock-free: a free buffer, or nullptr when none is left.
  uint8_t* Acquire();
  // Any thread: CUPTI returned `buffer` holding `valid_bytes` of records.
  // False when `buffer` is not one of this pool's handed-out buffers (or
  // comes back twice); such returns are counted in rejected(), since their
  // records are lost.
  bool Complete(const uint8_t* buffer, size_t valid_bytes);

  // Only while CUPTI holds none of this pool's buffers (before a capture
  // starts, after its forced flush): every buffer becomes free again.
  void Reset();
  // Calls fn(data, valid_bytes) for each returned buffer, in hand-out order.
  template <typename Fn>
  void ForEachCompleted(Fn&& fn) const {
    const size_t handed = HandedOut();
    for (size_t i = 0; i < handed; ++i) {
      const size_t valid = valid_bytes_[i].load(std::memory_order_acquire);
      if (valid != kNotReturned && valid > 0) fn(base_ + i * buffer_bytes_, valid);
    }
  }

  size_t buffer_bytes() const { return buffer_bytes_; }
  size_t count() const { return count_; }
  size_t HandedOut() const;
  // Handed out and not yet returned.
  size_t Outstanding() const;
  uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }
  uint64_t rejected() const { return rejected_.load(std::memory_order_relaxed); }

 private:
  static constexpr size_t kNotReturned = ~size_t{0};
  ActivityBufferPool(uint8_t* base, size_t buffer_bytes, size_t count);
  bool Accept(const uint8_t* buffer, size_t valid_bytes);

  uint8_t* const base_;
  const size_t buffer_bytes_;
  const size_t count_;
  std::unique_ptr<std::atomic<size_t>[]> valid_bytes_;
  std::atomic<size_t> next_{0};
  std::atomic<size_t> returned_{0};
  std::atomic<uint64_t> refused_{0};
  std::atomic<uint64_t> rejected_{0};
};

}  // namespace cupti
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_CUPTI_BUFFER_POOL_H_
