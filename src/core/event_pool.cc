#include "src/core/event_pool.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace core {

absl::StatusOr<std::unique_ptr<EventPool>> EventPool::Create(
    uint64_t bytes, uint32_t generation) {
  const uint64_t num_blocks =
      std::max<uint64_t>(1, bytes / internal::EventBlock::kBytes);
  const uint64_t length = num_blocks * internal::EventBlock::kBytes;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot reserve ", length,
                     " bytes for the event buffer (max_buffer_bytes): ",
                     std::strerror(errno)));
  }
  return std::unique_ptr<EventPool>(
      new EventPool(static_cast<char*>(base), num_blocks, generation));
}

EventPool::~EventPool() {
  munmap(base_, num_blocks_ * internal::EventBlock::kBytes);
}

uint64_t EventPool::used_bytes() const {
  return std::min(next_block_.load(std::memory_order_relaxed), num_blocks_) *
         internal::EventBlock::kBytes;
}

}  // namespace core
}  // namespace neuronprof
