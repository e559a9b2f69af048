#include "src/session/mapped_arena.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>

#include "src/xplane/sanitizers.h"

// LeakSanitizer scans the heap, not these mappings: registered as roots,
// the strings and messages that an arena block points to are not leaks.
#if NEURONPROF_ASAN
#define NEURONPROF_LSAN_ROOTS 1
extern "C" void __lsan_register_root_region(const void* p, size_t size);
extern "C" void __lsan_unregister_root_region(const void* p, size_t size);
#endif

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels say EINVAL.
#endif

namespace neuronprof {
namespace session {
namespace {

// Blocks grow to 2 MiB: a few hundred mappings for a dump of millions of
// events. Small pages, not transparent huge ones: on a VM whose free pages
// went back to the hypervisor, the first touch of a 2 MiB page cost ~2.3 ms
// per MB against ~0.4 ms with 4 KiB pages (a 1M-event Stop() spent ~0.5 s
// of CPU zeroing huge pages), so the blocks say MADV_NOHUGEPAGE.
constexpr size_t kStartBlockBytes = size_t{64} << 10;
constexpr size_t kMaxBlockBytes = size_t{2} << 20;

// A PrefaultedBlocks' address space: far more than any capture takes,
// never committed beyond what its thread populates (MAP_NORESERVE).
constexpr size_t kReservationBytes = size_t{64} << 30;
// Its thread commits ahead of the blocks cut as much as was cut (the
// arena's blocks double up to 2 MiB, then keep coming), at most this, in
// steps of kCommitStepBytes.
constexpr size_t kMaxAheadBytes = size_t{16} << 20;
constexpr size_t kCommitStepBytes = size_t{2} << 20;

std::atomic<int64_t> g_mapped_bytes{0};
std::atomic<int64_t> g_blocks_ever{0};
std::atomic<int64_t> g_prefaulted_blocks_ever{0};

// The live PrefaultedBlocks' reservation; base == nullptr when none.
struct Reservation {
  std::mutex mutex;
  std::condition_variable wake;  // Something was cut, or stop.
  std::condition_variable committed_more;
  char* base = nullptr;
  size_t cut = 0;        // Bytes handed to arenas, from base.
  size_t committed = 0;  // Bytes from base the thread has populated.
  bool stop = false;
  bool thread_done = false;
  std::thread thread;

  // What the thread commits up to now.
  size_t Target() const { return std::min(kReservationBytes, cut + std::min(cut, kMaxAheadBytes)); }
};

Reservation& TheReservation() {
  static auto* reservation = new Reservation();
  return *reservation;
}

void CommitAhead(Reservation* r) {
  std::unique_lock<std::mutex> lock(r->mutex);
  while (!r->stop) {
    // Never behind the cut: what an arena holds is its own to fault in.
    const size_t from = std::max(r->committed, r->cut);
    if (from >= r->Target()) {
      r->wake.wait(lock);
      continue;
    }
    const size_t step = std::min(kCommitStepBytes, r->Target() - from);
    char* const at = r->base + from;
    lock.unlock();
    const bool ok = madvise(at, step, MADV_POPULATE_WRITE) == 0;
    lock.lock();
    if (!ok) break;  // No MADV_POPULATE_WRITE: the blocks fault as usual.
    r->committed = from + step;
    r->committed_more.notify_all();
  }
  r->thread_done = true;
  r->committed_more.notify_all();
}

// A block of whole 2 MiB cut from the live reservation, or nullptr.
void* CutReserved(size_t bytes) {
  Reservation& r = TheReservation();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.base == nullptr || r.cut + bytes > kReservationBytes) return nullptr;
  void* block = r.base + r.cut;
  r.cut += bytes;
  r.wake.notify_one();
  g_prefaulted_blocks_ever.fetch_add(1, std::memory_order_relaxed);
  return block;
}

void* Map(size_t bytes) {
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();  // As operator new would.
  madvise(block, bytes, MADV_NOHUGEPAGE);  // Also where THP is "always".
  return block;
}

void* MapBlock(size_t bytes) {
  void* block = bytes % kMaxBlockBytes == 0 ? CutReserved(bytes) : nullptr;
  if (block == nullptr) block = Map(bytes);
  g_mapped_bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  g_blocks_ever.fetch_add(1, std::memory_order_relaxed);
#ifdef NEURONPROF_LSAN_ROOTS
  __lsan_register_root_region(block, bytes);
#endif
  return block;
}

void UnmapBlock(void* block, size_t bytes) {
#ifdef NEURONPROF_LSAN_ROOTS
  __lsan_unregister_root_region(block, bytes);
#endif
  munmap(block, bytes);
  g_mapped_bytes.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

}  // namespace

std::unique_ptr<google::protobuf::Arena> NewMappedArena() {
#if NEURONPROF_GCC_TSAN
  return nullptr;
#endif
  google::protobuf::ArenaOptions options;
  options.start_block_size = kStartBlockBytes;
  options.max_block_size = kMaxBlockBytes;
  options.block_alloc = MapBlock;
  options.block_dealloc = UnmapBlock;
  return std::make_unique<google::protobuf::Arena>(options);
}

PrefaultedBlocks::PrefaultedBlocks() {
  Reservation& r = TheReservation();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (r.base != nullptr) return;  // Another one is live.
  void* mapped = mmap(nullptr, kReservationBytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapped == MAP_FAILED) return;
  char* const base = static_cast<char*>(mapped);
  madvise(base, kReservationBytes, MADV_NOHUGEPAGE);
  r.base = base;
  r.cut = r.committed = 0;
  r.stop = r.thread_done = false;
  r.thread = std::thread(CommitAhead, &r);
  active_ = true;
}

PrefaultedBlocks::~PrefaultedBlocks() {
  if (!active_) return;
  Reservation& r = TheReservation();
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    r.stop = true;
    r.wake.notify_one();
  }
  r.thread.join();
  std::lock_guard<std::mutex> lock(r.mutex);
  // The blocks cut are their arenas' (unmapped one by one with them).
  munmap(r.base + r.cut, kReservationBytes - r.cut);
  r.base = nullptr;
}

int64_t PrefaultedBlocks::WaitUntilCommitted() {
  if (!active_) return 0;
  Reservation& r = TheReservation();
  std::unique_lock<std::mutex> lock(r.mutex);
  r.committed_more.wait(lock, [&r] { return r.thread_done || r.committed >= r.Target(); });
  return r.committed > r.cut ? static_cast<int64_t>(r.committed - r.cut) : 0;
}

MappedArenaCounts CountMappedArenas() {
  MappedArenaCounts counts;
  counts.prefaulted_blocks_ever = g_prefaulted_blocks_ever.load(std::memory_order_relaxed);
  counts.mapped_bytes = g_mapped_bytes.load(std::memory_order_relaxed);
  counts.blocks_ever = g_blocks_ever.load(std::memory_order_relaxed);
  return counts;
}

}  // namespace session
}  // namespace neuronprof
