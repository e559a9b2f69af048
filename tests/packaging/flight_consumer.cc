// An inference server built against the installed package: a FlightRecorder
// records while the server dlopens a backend (RTLD_LOCAL, linked to
// neuronprof::markers only) whose markers must land in the ring. Then the
// two ways in from outside the process, through the installed libraries:
// the dump signal (SIGUSR2) and a remote pull (neuronprof::Capture with
// flight_recorder_now against the recorder's own server port).
//   flight_consumer LOGDIR PLUGIN.so
// Exits 0 only if both hold exactly the server's 2 and the backend's 40
// markers, and SummarizeMarkers reads the dump's request step. Used by
// tests/packaging/check_packaging.sh.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <neuronprof/capture.h>
#include <neuronprof/flight_recorder.h>
#include <neuronprof/summary.h>
#include <neuronprof/trace.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <string>

namespace {

constexpr int64_t kExpectedEvents = 2 + 40;

// A loopback port that was free a moment ago.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return 0;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

int Fail(const std::string& what) {
  std::fprintf(stderr, "flight_consumer: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: flight_consumer LOGDIR PLUGIN.so");
  std::promise<absl::StatusOr<neuronprof::ProfileResult>> signalled;
  neuronprof::FlightRecorderOptions options;
  options.logdir = argv[1];
  options.host_name = "flight_consumer";
  options.ring_bytes = int64_t{4} << 20;
  options.port = FreePort();
  options.dump_signal = SIGUSR2;
  options.on_signal_dump = [&](const absl::StatusOr<neuronprof::ProfileResult>& result) {
    signalled.set_value(result);
  };
  neuronprof::FlightRecorder recorder(options);
  if (!recorder.status().ok()) return Fail(recorder.status().ToString());

  {
    neuronprof::StepTrace request("request", 1);
    NEURONPROF_SCOPE("load_backend");
    // Never dlclose'd: NEURONPROF_SCOPE names point into the plugin.
    void* plugin = ::dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    if (plugin == nullptr) return Fail(std::string("dlopen: ") + ::dlerror());
    auto backend_run = reinterpret_cast<void (*)(int)>(::dlsym(plugin, "backend_run"));
    if (backend_run == nullptr) return Fail("no backend_run in the plugin");
    backend_run(10);
  }

  if (::kill(::getpid(), SIGUSR2) != 0) return Fail("kill(SIGUSR2) failed");
  auto future = signalled.get_future();
  if (future.wait_for(std::chrono::minutes(1)) != std::future_status::ready) {
    return Fail("no dump within a minute of SIGUSR2");
  }
  const absl::StatusOr<neuronprof::ProfileResult> dump = future.get();
  if (!dump.ok()) return Fail("signal dump: " + dump.status().ToString());
  std::printf("signal dump: events=%lld run_dir=%s\n", static_cast<long long>(dump->events),
              dump->run_dir.c_str());
  if (dump->events != kExpectedEvents) return Fail("the signal dump lacks markers");
  // The dump's own breakdown, in process.
  const auto summary = neuronprof::SummarizeMarkers(*dump);
  if (!summary.ok()) return Fail("SummarizeMarkers: " + summary.status().ToString());
  if (summary->steps.size() != 1 || summary->steps[0].name != "request" ||
      summary->tails.size() != 1 || summary->tails[0].instances != 1) {
    return Fail("the dump's summary lacks the request step");
  }
  std::printf("%s\n", summary->tails[0].text.c_str());

  neuronprof::CaptureOptions pull;
  pull.service_addresses = {"127.0.0.1:" + std::to_string(options.port)};
  pull.logdir = argv[1];
  pull.duration_ms = 60000;  // The last minute, at once.
  pull.run_name = "pulled";
  pull.flight_recorder_now = true;
  auto pulled = neuronprof::Capture(pull);
  if (!pulled.ok()) return Fail("remote pull: " + pulled.status().ToString());
  std::printf("remote pull: events=%lld run_dir=%s\n",
              static_cast<long long>(pulled->hosts[0].events), pulled->run_dir.c_str());
  if (pulled->hosts[0].events != kExpectedEvents) return Fail("the pull lacks markers");
  std::printf("flight_consumer OK\n");
  return 0;
}
