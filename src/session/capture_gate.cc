#include "src/session/capture_gate.h"

#include <chrono>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace session {
namespace {

struct GateState {
  std::mutex mutex;
  bool held = false;
  std::string holder;
  std::chrono::steady_clock::time_point since;
};

GateState& State() {
  static auto* state = new GateState();  // Never destroyed: used at exit.
  return *state;
}

}  // namespace

absl::StatusOr<CaptureGate> CaptureGate::Acquire(std::string holder) {
  GateState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  const auto now = std::chrono::steady_clock::now();
  if (state.held) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - state.since).count();
    return absl::FailedPreconditionError(absl::StrCat(
        "a capture is already running in this process: ", state.holder, ", started ", ms,
        " ms ago. Only one capture runs at a time: start this one after that one has "
        "ended"));
  }
  state.held = true;
  state.holder = std::move(holder);
  state.since = now;
  CaptureGate gate;
  gate.held_ = true;
  return gate;
}

CaptureGate::CaptureGate(CaptureGate&& other) noexcept : held_(std::exchange(other.held_, false)) {}

CaptureGate& CaptureGate::operator=(CaptureGate&& other) noexcept {
  if (this != &other) {
    Release();
    held_ = std::exchange(other.held_, false);
  }
  return *this;
}

void CaptureGate::Release() {
  if (!held_) return;
  held_ = false;
  GateState& state = State();
  std::lock_guard<std::mutex> lock(state.mutex);
  state.held = false;
  state.holder.clear();
}

}  // namespace session
}  // namespace neuronprof
