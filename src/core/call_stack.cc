// internal::CaptureStack (neuronprof/internal/recorder.h).
#include <libunwind.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace internal {

// libunwind's unw_backtrace: it caches each frame's unwind rule per thread,
// 150-250 ns for 8-30 frames where libgcc's _Unwind_Backtrace (which
// interprets the DWARF CFI every time) took 1-30 us. noinline: its own
// frame is the one left out.
[[gnu::noinline]] size_t CaptureStack(uint64_t* frames, size_t max_frames) {
  void* pcs[kMaxStackFrames + 1];
  const size_t wanted = std::min(max_frames, kMaxStackFrames) + 1;
  const int count = unw_backtrace(pcs, static_cast<int>(wanted));
  size_t kept = 0;
  for (int i = 1; i < count; ++i) frames[kept++] = reinterpret_cast<uint64_t>(pcs[i]);
  return kept;
}

}  // namespace internal
}  // namespace neuronprof
