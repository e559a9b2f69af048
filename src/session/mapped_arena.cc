#include "src/session/mapped_arena.h"

#include <sys/mman.h>

#include <atomic>
#include <new>

namespace neuronprof {
namespace session {
namespace {

// Blocks grow to 2 MiB: a few hundred mappings for a dump of millions of
// events. Untouched pages of the last block are never committed.
constexpr size_t kStartBlockBytes = size_t{64} << 10;
constexpr size_t kMaxBlockBytes = size_t{2} << 20;

std::atomic<int64_t> g_mapped_bytes{0};
std::atomic<int64_t> g_blocks_ever{0};

void* MapBlock(size_t bytes) {
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();  // As operator new would.
  g_mapped_bytes.fetch_add(static_cast<int64_t>(bytes), std::memory_order_relaxed);
  g_blocks_ever.fetch_add(1, std::memory_order_relaxed);
  return block;
}

void UnmapBlock(void* block, size_t bytes) {
  munmap(block, bytes);
  g_mapped_bytes.fetch_sub(static_cast<int64_t>(bytes), std::memory_order_relaxed);
}

}  // namespace

std::unique_ptr<google::protobuf::Arena> NewMappedArena() {
#if defined(__SANITIZE_THREAD__) && !defined(__clang__)
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
