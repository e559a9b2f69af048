#include "src/session/mapped_arena.h"

#include <sys/mman.h>

#include <new>

namespace neuronprof {
namespace session {
namespace {

// Blocks grow to 2 MiB: a few hundred mappings for a dump of millions of
// events. Untouched pages of the last block are never committed.
constexpr size_t kStartBlockBytes = size_t{64} << 10;
constexpr size_t kMaxBlockBytes = size_t{2} << 20;

void* MapBlock(size_t bytes) {
  void* block = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) throw std::bad_alloc();  // As operator new would.
  return block;
}

void UnmapBlock(void* block, size_t bytes) { munmap(block, bytes); }

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

}  // namespace session
}  // namespace neuronprof
