// The one "one capture per process" gate. A Profiler, a remote capture
// through the profiler server and any other CaptureSession all take it, so
// a refused capture always gets the same message: what is running, since
// when, and what the user can do.
#ifndef NEURONPROF_SRC_SESSION_CAPTURE_GATE_H_
#define NEURONPROF_SRC_SESSION_CAPTURE_GATE_H_

#include <string>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace session {

class CaptureGate {
 public:
  // Takes the process's one capture for `holder`, a description a user
  // recognises, with how it ends ("a Profiler (run_name 'x'; it ends after
  // ms_duration or at Profiler::Stop())"). FailedPrecondition while another
  // holds it: "a capture is already running in this process: <holder>,
  // started N ms ago. Only one capture runs at a time: start this one after
  // that one has ended".
  static absl::StatusOr<CaptureGate> Acquire(std::string holder);

  CaptureGate() = default;  // Holds nothing.
  CaptureGate(CaptureGate&& other) noexcept;
  CaptureGate& operator=(CaptureGate&& other) noexcept;
  CaptureGate(const CaptureGate&) = delete;
  CaptureGate& operator=(const CaptureGate&) = delete;
  ~CaptureGate() { Release(); }

  bool held() const { return held_; }
  // Lets the next capture start; idempotent.
  void Release();

 private:
  bool held_ = false;
};

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_CAPTURE_GATE_H_
