// A signal the application names (e.g. SIGUSR2) that makes the flight
// recorder dump: `kill -USR2 <pid>` from a shell or a supervisor. The
// handler only posts a semaphore (async-signal-safe); a thread this watch
// owns waits on it and runs the dump, so the interrupted thread never does
// more than that post.
#ifndef NEURONPROF_SRC_SESSION_SIGNAL_DUMP_H_
#define NEURONPROF_SRC_SESSION_SIGNAL_DUMP_H_

#include <signal.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace session {

class SignalDump {
 public:
  // Installs the handler for `signal` and starts the thread that calls
  // `on_signal` once per delivery (deliveries during a call may merge into
  // one more call). InvalidArgument for a signal other than SIGHUP,
  // SIGUSR1, SIGUSR2 or a real-time signal; FailedPrecondition while
  // another SignalDump is installed.
  static absl::StatusOr<std::unique_ptr<SignalDump>> Start(int signal,
                                                           std::function<void()> on_signal);
  // Puts back the handler that was there before, lets a call in progress
  // finish, then ends the thread.
  ~SignalDump();

  SignalDump(const SignalDump&) = delete;
  SignalDump& operator=(const SignalDump&) = delete;

  // "SIGUSR2", "SIGRTMIN+3", ...
  static std::string SignalName(int signal);

 private:
  SignalDump(int signal, std::function<void()> on_signal, struct sigaction previous);
  void Run();

  const int signal_;
  const std::function<void()> on_signal_;
  const struct sigaction previous_;
  std::thread thread_;
};

}  // namespace session
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_SESSION_SIGNAL_DUMP_H_
