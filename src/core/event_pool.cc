#include "src/core/event_pool.h"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels return EINVAL.
#endif

namespace neuronprof {
namespace core {
namespace {
// Committed when a capture starts: 16 MiB holds ~520k events.
constexpr uint64_t kPrefaultBytes = uint64_t{16} << 20;
// The background thread keeps this much committed beyond the claimed
// blocks, in steps of kPrefaultStepBytes. It sleeps until a claim crosses
// a step: a timed poll woke it a thousand times a second, and each wake-up
// took a core from the recording threads of a saturated server.
constexpr uint64_t kPrefaultAheadBytes = uint64_t{32} << 20;
}  // namespace

EventPool::EventPool(char* base, uint64_t num_blocks, uint32_t generation, bool ring)
    : base_(base), num_blocks_(num_blocks), generation_(generation), ring_(ring) {
  sem_init(&prefault_wakeup_, /*pshared=*/0, /*value=*/0);
}

Result<std::unique_ptr<EventPool>> EventPool::Create(uint64_t bytes, uint32_t generation,
                                                     bool ring) {
  const uint64_t num_blocks = std::max<uint64_t>(1, bytes / internal::EventBlock::kBytes);
  const uint64_t length = num_blocks * internal::EventBlock::kBytes;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    return Result<>(ErrorCode::kResourceExhausted,
                    "cannot reserve " + std::to_string(length) +
                        " bytes for the event buffer (max_buffer_bytes): " + std::strerror(errno));
  }
  // Fresh pages fault on first write (~2 us each on a VM, ~16 ns per
  // event). Huge pages cut the count 512-fold where THP allows it, and the
  // first blocks are committed now, off the markers' path.
  // A ring (an always-on flight recorder) is committed whole now: it fills
  // up and stays full, and committing it later would take CPU from the
  // program while it serves.
  madvise(base, length, MADV_HUGEPAGE);
  const uint64_t prefault = ring ? length : std::min<uint64_t>(length, kPrefaultBytes);
  const bool can_populate = madvise(base, prefault, MADV_POPULATE_WRITE) == 0;
  if (!can_populate) {
    for (uint64_t offset = 0; offset < prefault; offset += 4096) {
      static_cast<volatile char*>(base)[offset] = 0;
    }
  }
  std::unique_ptr<EventPool> pool(
      new EventPool(static_cast<char*>(base), num_blocks, generation, ring));
  // MADV_POPULATE_WRITE commits pages without writing to them, so it is
  // safe beside threads that already fill those blocks; touching is not,
  // hence no background commits on kernels without it (< 5.14).
  if (can_populate && prefault < length) {
    pool->has_prefaulter_ = true;
    pool->prefaulter_ = std::thread([p = pool.get(), prefault] { p->PrefaultLoop(prefault); });
    // Named here, not by the thread itself, so it has its name on return.
    pthread_setname_np(pool->prefaulter_.native_handle(), kPrefaultThreadName);
  }
  return pool;
}

internal::RingBlockHeader* EventPool::ClaimRingBlock() {
  using internal::RingBlockHeader;
  // Inside the caller's write section, so a snapshot that froze claims and
  // then waited for every section to end sees no claim after that (the
  // membarrier argument of recorder.cc). Acquire: the snapshot's reads of
  // the blocks happen before it unfroze, so before we overwrite them.
  if (frozen_.load(std::memory_order_acquire)) return nullptr;
  // Every block may be some thread's current one: give up after one lap.
  for (uint64_t attempt = 0; attempt < num_blocks_; ++attempt) {
    const uint64_t ticket = next_block_.fetch_add(1, std::memory_order_relaxed);
    RingBlockHeader* header = ring_header(ticket % num_blocks_);
    uint32_t state = header->state.load(std::memory_order_relaxed);
    // Acquire: the previous owner's writes (released when it retired the
    // block) happen before ours.
    if (state != RingBlockHeader::kCurrent &&
        header->state.compare_exchange_strong(state, RingBlockHeader::kCurrent,
                                              std::memory_order_acquire,
                                              std::memory_order_relaxed)) {
      header->ticket = ticket;
      return header;
    }
  }
  return nullptr;
}

void EventPool::PrefaultLoop(uint64_t committed_bytes) {
  const uint64_t length = num_blocks_ * internal::EventBlock::kBytes;
  while (!prefault_stop_.load(std::memory_order_acquire) && committed_bytes < length) {
    if (committed_bytes < used_bytes() + kPrefaultAheadBytes) {
      const uint64_t step = std::min(kPrefaultStepBytes, length - committed_bytes);
      if (madvise(base_ + committed_bytes, step, MADV_POPULATE_WRITE) != 0) return;
      committed_bytes += step;
      continue;
    }
    while (sem_wait(&prefault_wakeup_) != 0 && errno == EINTR) {
    }
  }
}

void EventPool::WakePrefaulter() {
  if (has_prefaulter_) sem_post(&prefault_wakeup_);
}

void EventPool::StopPrefaulting() {
  if (!prefaulter_.joinable()) return;
  prefault_stop_.store(true, std::memory_order_release);
  sem_post(&prefault_wakeup_);
  prefaulter_.join();
}

EventPool::~EventPool() {
  StopPrefaulting();
  sem_destroy(&prefault_wakeup_);
  munmap(base_, num_blocks_ * internal::EventBlock::kBytes);
}

uint64_t EventPool::used_bytes() const {
  return std::min(next_block_.load(std::memory_order_relaxed), num_blocks_) *
         internal::EventBlock::kBytes;
}

}  // namespace core
}  // namespace neuronprof
