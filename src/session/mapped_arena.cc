#include "src/session/mapped_arena.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <new>

#include "src/xplane/sanitizers.h"

// LeakSanitizer scans the heap, not these mappings: registered as roots,
// the strings and messages that an arena block points to are not leaks.
#if NEURONPROF_ASAN
#define NEURONPROF_LSAN_ROOTS 1
extern "C" void __lsan_register_root_region(const void* p, size_t size);
extern "C" void __lsan_unregister_root_region(const void* p, size_t size);
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

std::atomic<int64_t> g_mapped_bytes{0};
std::atomic<int64_t> g_blocks_ever{0};

void* Map(size_t bytes) {
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();  // As operator new would.
  madvise(block, bytes, MADV_NOHUGEPAGE);           // Also where THP is "always".
  return block;
}

void* MapBlock(size_t bytes) {
  void* block = Map(bytes);
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

MappedArenaCounts CountMappedArenas() {
  MappedArenaCounts counts;
  counts.mapped_bytes = g_mapped_bytes.load(std::memory_order_relaxed);
  counts.blocks_ever = g_blocks_ever.load(std::memory_order_relaxed);
  return counts;
}

}  // namespace session
}  // namespace neuronprof
