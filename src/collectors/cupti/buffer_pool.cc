#include "src/collectors/cupti/buffer_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace cupti {

absl::StatusOr<std::unique_ptr<ActivityBufferPool>> ActivityBufferPool::Create(size_t buffer_bytes,
                                                                               size_t count) {
  if (buffer_bytes == 0 || buffer_bytes % kAlignment != 0 || count == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("CUPTI buffer pool needs a positive count and a buffer size that is "
                     "a positive multiple of ",
                     kAlignment, " bytes; got ", count, " buffers of ", buffer_bytes, " bytes"));
  }
  if (buffer_bytes > SIZE_MAX / count) {
    return absl::InvalidArgumentError("CUPTI buffer pool size overflows");
  }
  void* base = mmap(nullptr, buffer_bytes * count, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot reserve ", buffer_bytes * count,
                     " bytes for CUPTI buffers: ", std::strerror(errno)));
  }
  return std::unique_ptr<ActivityBufferPool>(
      new ActivityBufferPool(static_cast<uint8_t*>(base), buffer_bytes, count));
}

ActivityBufferPool::ActivityBufferPool(uint8_t* base, size_t buffer_bytes, size_t count)
    : base_(base),
      buffer_bytes_(buffer_bytes),
      count_(count),
      valid_bytes_(new std::atomic<size_t>[count]) {
  for (size_t i = 0; i < count_; ++i) valid_bytes_[i].store(kNotReturned);
}

ActivityBufferPool::~ActivityBufferPool() { munmap(base_, buffer_bytes_ * count_); }

uint8_t* ActivityBufferPool::Acquire() {
  // One fetch_add claims a slot; slots past the end are refusals.
  const size_t index = next_.fetch_add(1, std::memory_order_relaxed);
  if (index >= count_) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  return base_ + index * buffer_bytes_;
}

bool ActivityBufferPool::Complete(const uint8_t* buffer, size_t valid_bytes) {
  if (!Accept(buffer, valid_bytes)) {
    rejected_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  returned_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

bool ActivityBufferPool::Accept(const uint8_t* buffer, size_t valid_bytes) {
  if (buffer < base_ || buffer >= base_ + buffer_bytes_ * count_) return false;
  const size_t offset = static_cast<size_t>(buffer - base_);
  if (offset % buffer_bytes_ != 0) return false;
  const size_t index = offset / buffer_bytes_;
  if (index >= HandedOut()) return false;
  size_t expected = kNotReturned;
  // A buffer comes back once; a second return would be a CUPTI bug.
  return valid_bytes_[index].compare_exchange_strong(expected, std::min(valid_bytes, buffer_bytes_),
                                                     std::memory_order_release);
}

void ActivityBufferPool::Reset() {
  for (size_t i = 0; i < count_; ++i) {
    valid_bytes_[i].store(kNotReturned, std::memory_order_relaxed);
  }
  returned_.store(0, std::memory_order_relaxed);
  refused_.store(0, std::memory_order_relaxed);
  rejected_.store(0, std::memory_order_relaxed);
  next_.store(0, std::memory_order_release);
}

size_t ActivityBufferPool::HandedOut() const {
  return std::min(next_.load(std::memory_order_acquire), count_);
}

size_t ActivityBufferPool::Outstanding() const {
  return HandedOut() - returned_.load(std::memory_order_acquire);
}

}  // namespace cupti
}  // namespace neuronprof
