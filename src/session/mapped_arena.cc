#include "src/session/mapped_arena.h"

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <new>

namespace neuronprof {
namespace session {
namespace {

// Blocks grow to 2 MiB: a few hundred mappings for a dump of millions of
// events. A block of 2 MiB or more starts on a 2 MiB boundary and asks for
// transparent huge pages: one fault per 2 MiB instead of 512 (~40 ms less
// for the ~80 MB of a million events, and its unmap ~10 ms less).
constexpr size_t kStartBlockBytes = size_t{64} << 10;
constexpr size_t kMaxBlockBytes = size_t{2} << 20;
constexpr size_t kHugePageBytes = size_t{2} << 20;

std::atomic<int64_t> g_mapped_bytes{0};
std::atomic<int64_t> g_blocks_ever{0};

void* Map(size_t bytes) {
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();  // As operator new would.
  return block;
}

// `bytes` from a 2 MiB boundary: mapped with a huge page to spare, the
// rest before and after unmapped again.
void* MapHugeAligned(size_t bytes) {
  char* const mapped = static_cast<char*>(Map(bytes + kHugePageBytes));
  const uintptr_t address = reinterpret_cast<uintptr_t>(mapped);
  char* const block = mapped + ((kHugePageBytes - address % kHugePageBytes) % kHugePageBytes);
  if (block > mapped) munmap(mapped, static_cast<size_t>(block - mapped));
  char* const end = mapped + bytes + kHugePageBytes;
  if (end > block + bytes) munmap(block + bytes, static_cast<size_t>(end - (block + bytes)));
  madvise(block, bytes, MADV_HUGEPAGE);
  return block;
}

void* MapBlock(size_t bytes) {
  void* block = bytes >= kHugePageBytes ? MapHugeAligned(bytes) : Map(bytes);
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
