// The arena a capture's XSpace is built on: its blocks keep 4 KiB pages
// (a huge page's first touch costs more than its 512 small ones on a VM),
// and every block goes back to the system with the arena. Checked in the
// kernel's own view (/proc/self/smaps).
#include "src/session/mapped_arena.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace {

// The VmFlags of the mapping holding `address`, "" if none does.
std::string VmFlagsAt(const void* address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t start = 0;
    uintptr_t end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> start >> dash >> end && dash == '-') {
      inside = start <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

bool KernelHasHugePages() {
  return access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0;
}

TEST_CASE("a mapped arena's large blocks refuse huge pages, and all go with the arena") {
  const session::MappedArenaCounts before = session::CountMappedArenas();
  auto arena = session::NewMappedArena();
  if (arena == nullptr) return;  // GCC's TSan: captures go on the heap.
  auto* space = google::protobuf::Arena::CreateMessage<tensorflow::profiler::XSpace>(arena.get());
  auto* line = space->add_planes()->add_lines();
  // ~10 MB of events: past the 64 KiB start, blocks of 2 MiB.
  constexpr int kEvents = 200000;
  for (int i = 0; i < kEvents; ++i) line->add_events()->set_offset_ps(i);
  const session::MappedArenaCounts built = session::CountMappedArenas();
  CHECK(built.mapped_bytes - before.mapped_bytes >= int64_t{8} << 20);
  if (KernelHasHugePages()) {
    // "nh": MADV_NOHUGEPAGE, whatever the system-wide THP setting.
    CHECK_THAT(VmFlagsAt(&line->events(kEvents - 1)), Catch::Contains(" nh"));
  }
  arena.reset();
  CHECK(session::CountMappedArenas().mapped_bytes == before.mapped_bytes);
}

}  // namespace
}  // namespace neuronprof
