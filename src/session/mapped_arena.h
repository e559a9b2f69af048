// A protobuf arena whose blocks are mappings of their own (mmap), unmapped
// when the arena goes: a large, short-lived XSpace built on it (a capture's
// Stop(), a flight recorder's dump) gives its memory back to the system at once, whatever
// malloc keeps of freed heap in its per-thread arenas. Also no malloc
// header per message.
#ifndef NEURONPROF_SRC_SESSION_MAPPED_ARENA_H_
#define NEURONPROF_SRC_SESSION_MAPPED_ARENA_H_

#include <cstdint>
#include <memory>

#include <google/protobuf/arena.h>

namespace neuronprof {
namespace session {

// nullptr (build on the heap) under GCC's ThreadSanitizer: protobuf
// 3.21's map fields on an arena crash there (a three-line XSpace with one
// map entry does), while clang's TSan and ASan/UBSan run them clean.
std::unique_ptr<google::protobuf::Arena> NewMappedArena();

// While one lives, the mapped arenas' blocks of 2 MiB are cut from one
// address-space reservation that a background thread commits ahead of
// them (MADV_POPULATE_WRITE), so that the page faults and the zeroing of
// fresh memory (~0.5 ms per MB on a VM) run on another core than the one
// building the XSpace. It commits at most as much ahead as was cut so far
// (and at most 16 MiB): a small capture commits little. What is left of
// the reservation is unmapped when it goes; the blocks cut from it stay
// their arenas'. One at a time (a second one reserves nothing); nothing
// happens where the kernel lacks MADV_POPULATE_WRITE (< 5.14).
class PrefaultedBlocks {
 public:
  PrefaultedBlocks();
  ~PrefaultedBlocks();
  PrefaultedBlocks(const PrefaultedBlocks&) = delete;
  PrefaultedBlocks& operator=(const PrefaultedBlocks&) = delete;

  // Whether this one holds the reservation.
  bool active() const { return active_; }
  // For tests: waits until the background thread has committed what it
  // aims for now; returns the bytes committed beyond those cut.
  int64_t WaitUntilCommitted();

 private:
  bool active_ = false;
};

// Process-wide, for tests: the bytes of these arenas' blocks mapped now,
// and how many blocks were ever mapped.
struct MappedArenaCounts {
  int64_t mapped_bytes = 0;
  int64_t blocks_ever = 0;
  int64_t prefaulted_blocks_ever = 0;  // Cut from a PrefaultedBlocks' reservation.
};
MappedArenaCounts CountMappedArenas();

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_MAPPED_ARENA_H_
