// What a forked child gets of the objects that own threads (a Profiler's
// timer and writer, a flight recorder's trigger and signal threads, a
// capture server's gRPC threads): none of those threads, which fork() does
// not copy. So the child's copy of such an object is inert: it records and
// writes nothing, its methods say why, and its destruction leaves what it
// holds alone (no thread joined or woken), to go with the child's memory
// at its exit. Markers in the child record nothing either (core turns the
// capture state off after fork(); src/core/recorder.cc).
#ifndef NEURONPROF_SRC_SESSION_FORK_GUARD_H_
#define NEURONPROF_SRC_SESSION_FORK_GUARD_H_

#include <sys/types.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace session {

// The process an object was made in.
class OwnerProcess {
 public:
  OwnerProcess() : pid_(getpid()) {}

  // True in a child forked after the object was made.
  bool ForkedCopy() const { return getpid() != pid_; }

  // In such a child: lets go of `owned` without destroying it, kept
  // reachable (a leak checker at the child's exit is not told of it).
  template <typename T>
  static void LeaveAlone(std::unique_ptr<T>& owned) {
    static auto* const left = new std::vector<std::unique_ptr<T>>();  // Never freed.
    left->push_back(std::move(owned));
  }

  // FailedPrecondition for a call on `what` in such a child.
  absl::Status ForkedCopyError(std::string_view what) const {
    return absl::FailedPreconditionError(
        absl::StrCat(std::string(what), " was made in process ", pid_,
                     "; this is a child forked from it (process ", getpid(),
                     "), where its copy records and writes nothing (the threads it owns were not "
                     "forked): make a new one in the child after the parent's has stopped"));
  }

 private:
  pid_t pid_;
};

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_FORK_GUARD_H_
