// internal::CaptureStack (neuronprof/internal/recorder.h).
#include <unwind.h>

#include <cstddef>
#include <cstdint>

#include "neuronprof/internal/recorder.h"

namespace neuronprof {
namespace internal {
namespace {

struct Walk {
  uint64_t* frames;
  size_t max_frames;
  size_t count;
  bool skipped_self;
};

_Unwind_Reason_Code AddFrame(_Unwind_Context* context, void* arg) {
  Walk& walk = *static_cast<Walk*>(arg);
  if (!walk.skipped_self) {  // CaptureStack's own frame.
    walk.skipped_self = true;
    return _URC_NO_REASON;
  }
  if (walk.count == walk.max_frames) return _URC_END_OF_STACK;
  const uint64_t pc = _Unwind_GetIP(context);
  if (pc == 0) return _URC_END_OF_STACK;
  walk.frames[walk.count++] = pc;
  return _URC_NO_REASON;
}

}  // namespace

// noinline: its own frame is the one skipped.
[[gnu::noinline]] size_t CaptureStack(uint64_t* frames, size_t max_frames) {
  Walk walk{frames, max_frames, 0, false};
  _Unwind_Backtrace(&AddFrame, &walk);
  return walk.count;
}

}  // namespace internal
}  // namespace neuronprof
