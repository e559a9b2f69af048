#include "src/session/signal_dump.h"

#include <semaphore.h>
#include <string.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace session {
namespace {

// Process-wide: a signal has one handler. Never destroyed, so a signal
// that arrives during static destruction still finds them.
sem_t* Wakeups() {
  static sem_t* semaphore = [] {
    auto* s = new sem_t;
    sem_init(s, 0, 0);
    return s;
  }();
  return semaphore;
}
std::atomic<bool> g_installed{false};
std::atomic<bool> g_stopping{false};

void OnSignal(int) {
  const int saved_errno = errno;  // sem_post may set it; the thread we interrupt may read it.
  sem_post(Wakeups());
  errno = saved_errno;
}

bool Allowed(int signal) {
  return signal == SIGHUP || signal == SIGUSR1 || signal == SIGUSR2 ||
         (signal >= SIGRTMIN && signal <= SIGRTMAX);
}

}  // namespace

std::string SignalDump::SignalName(int signal) {
  if (signal == SIGHUP) return "SIGHUP";
  if (signal == SIGUSR1) return "SIGUSR1";
  if (signal == SIGUSR2) return "SIGUSR2";
  if (signal >= SIGRTMIN && signal <= SIGRTMAX) return absl::StrCat("SIGRTMIN+", signal - SIGRTMIN);
  return absl::StrCat("signal ", signal);
}

absl::StatusOr<std::unique_ptr<SignalDump>> SignalDump::Start(int signal,
                                                              std::function<void()> on_signal) {
  if (!Allowed(signal)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "dump_signal must be SIGHUP (", SIGHUP, "), SIGUSR1 (", SIGUSR1, "), SIGUSR2 (", SIGUSR2,
        ") or a real-time signal (", SIGRTMIN, "..", SIGRTMAX, "), got ", signal));
  }
  if (g_installed.exchange(true)) {
    return absl::FailedPreconditionError("another flight recorder's dump signal is installed");
  }
  while (sem_trywait(Wakeups()) == 0) {
  }  // Posts left from an earlier watch.
  g_stopping.store(false);
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  struct sigaction previous {};
  if (sigaction(signal, &action, &previous) != 0) {
    g_installed.store(false);
    return absl::InternalError(
        absl::StrCat("cannot install a handler for ", SignalName(signal), ": ", strerror(errno)));
  }
  return std::unique_ptr<SignalDump>(new SignalDump(signal, std::move(on_signal), previous));
}

SignalDump::SignalDump(int signal, std::function<void()> on_signal, struct sigaction previous)
    : signal_(signal), on_signal_(std::move(on_signal)), previous_(previous) {
  thread_ = std::thread([this] { Run(); });
}

SignalDump::~SignalDump() {
  sigaction(signal_, &previous_, nullptr);
  g_stopping.store(true);
  sem_post(Wakeups());
  thread_.join();
  g_installed.store(false);
}

void SignalDump::Run() {
  while (true) {
    if (sem_wait(Wakeups()) != 0) continue;  // EINTR.
    if (g_stopping.load()) return;
    while (sem_trywait(Wakeups()) == 0) {
    }                               // A burst of signals is one dump.
    if (g_stopping.load()) return;  // The burst held the destructor's post.
    on_signal_();
  }
}

}  // namespace session
}  // namespace neuronprof
