// A protobuf arena whose blocks are mappings of their own (mmap), unmapped
// when the arena goes: a large, short-lived XSpace built on it (a capture's
// Stop(), a flight recorder's dump) gives its memory back to the system at once, whatever
// malloc keeps of freed heap in its per-thread arenas. Also no malloc
// header per message.
#ifndef NEURONPROF_SRC_SESSION_MAPPED_ARENA_H_
#define NEURONPROF_SRC_SESSION_MAPPED_ARENA_H_

#include <google/protobuf/arena.h>

#include <cstdint>
#include <memory>

namespace neuronprof {
namespace session {

// nullptr (build on the heap) under GCC's ThreadSanitizer: protobuf
// 3.21's map fields on an arena crash there (a three-line XSpace with one
// map entry does), while clang's TSan and ASan/UBSan run them clean.
std::unique_ptr<google::protobuf::Arena> NewMappedArena();

// Process-wide, for tests: the bytes of these arenas' blocks mapped now,
// and how many blocks were ever mapped.
struct MappedArenaCounts {
  int64_t mapped_bytes = 0;
  int64_t blocks_ever = 0;
};
MappedArenaCounts CountMappedArenas();

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_MAPPED_ARENA_H_
