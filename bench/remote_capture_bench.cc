// Remote capture end to end: how long after its window a capture returns.
//
// The profiled program in a child process (a ProfilerServer and app threads
// recording --rate events per second: ScopedTrace with StaticName names,
// paced in batches), and a neuronprof::Capture of it from this one over
// loopback gRPC, --rounds times, as `neuronprof capture` runs (apart from
// the program it profiles, with gRPC's pollers of its own).
// Prints one line per round and the median of each column:
//
//   remote_capture_bench [--duration_ms=2000] [--rate=500000] [--threads=2]
//                        [--rounds=5] [--chrome_trace=0|1] [--kineto=0|1]
//
// Without --chrome_trace and --kineto it writes what `neuronprof capture`
// writes by default (CaptureOptions' defaults: the xplane.pb and the
// Kineto trace); --kineto=0 alone: the xplane.pb and the Chrome trace.
//
// total: Capture() call to return; after: total - duration; the stages are
// the host's HostCaptureTimings (capture.h) of its last window.
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/capture.h"
#include "neuronprof/server.h"
#include "neuronprof/trace.h"
#include "src/export/atomic_file.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Flags {
  int64_t duration_ms = 2000;
  int64_t rate = 500000;  // Events per second, all app threads together.
  int threads = 2;
  int rounds = 5;
  std::optional<bool> chrome_trace;  // Unset: CaptureOptions' default.
  bool kineto = true;
};

bool ParseFlag(const char* arg, const char* name, int64_t* value) {
  const size_t length = std::strlen(name);
  if (std::strncmp(arg, name, length) != 0 || arg[length] != '=') return false;
  char* end = nullptr;
  *value = std::strtoll(arg + length + 1, &end, 10);
  if (*end != '\0' || end == arg + length + 1) {
    std::fprintf(stderr, "remote_capture_bench: %s needs a whole number, got '%s'\n", name,
                 arg + length + 1);
    std::exit(2);
  }
  return true;
}

Flags ParseFlags(int argc, char** argv) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    int64_t value = 0;
    if (ParseFlag(argv[i], "--duration_ms", &flags.duration_ms) ||
        ParseFlag(argv[i], "--rate", &flags.rate)) {
      continue;
    }
    if (ParseFlag(argv[i], "--threads", &value)) {
      flags.threads = static_cast<int>(value);
    } else if (ParseFlag(argv[i], "--rounds", &value)) {
      flags.rounds = static_cast<int>(value);
    } else if (ParseFlag(argv[i], "--chrome_trace", &value)) {
      flags.chrome_trace = value != 0;
    } else if (ParseFlag(argv[i], "--kineto", &value)) {
      flags.kineto = value != 0;
    } else {
      std::fprintf(stderr, "remote_capture_bench: unknown argument '%s'\n", argv[i]);
      std::exit(2);
    }
  }
  if (flags.duration_ms <= 0 || flags.rate <= 0 || flags.threads <= 0 || flags.rounds <= 0) {
    std::fprintf(stderr, "remote_capture_bench: every flag must be positive\n");
    std::exit(2);
  }
  return flags;
}

// One app thread: `rate` events per second, in batches of 1000 so that the
// pacing costs little; a batch that falls behind is not made up twice.
void RecordEvents(int64_t rate, const std::atomic<bool>& stop) {
  static constexpr neuronprof::StaticName kNames[] = {
      neuronprof::StaticName("matmul"), neuronprof::StaticName("add"),
      neuronprof::StaticName("relu"), neuronprof::StaticName("softmax")};
  neuronprof::SetCurrentThreadName("bench_app");
  constexpr int kBatch = 1000;
  const auto batch_period = std::chrono::nanoseconds(int64_t{1000000000} * kBatch / rate);
  auto next = Clock::now();
  for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
    for (int j = 0; j < kBatch; ++j) {
      neuronprof::ScopedTrace trace(kNames[j & 3]);
    }
    next = std::max(next + batch_period, Clock::now() - batch_period);
    std::this_thread::sleep_until(next);
  }
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// The profiled program, in the child: serves on a free port, which it
// writes to `port_fd`, while its app threads record, until `stop_fd` ends
// (the bench closed it, or exited).
int ServeProfiledProgram(const Flags& flags, const char* logdir, int port_fd, int stop_fd) {
  neuronprof::ProfilerServerOptions server_options;
  server_options.port = 0;
  server_options.allowed_root = logdir;
  server_options.max_buffer_bytes = int64_t{1} << 30;
  auto server = neuronprof::ProfilerServer::Start(server_options);
  if (!server.ok()) {
    std::fprintf(stderr, "remote_capture_bench: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  std::atomic<bool> stop{false};
  std::vector<std::thread> app;
  for (int i = 0; i < flags.threads; ++i) {
    app.emplace_back(RecordEvents, flags.rate / flags.threads, std::cref(stop));
  }
  const int port = (*server)->port();
  if (write(port_fd, &port, sizeof(port)) != static_cast<ssize_t>(sizeof(port))) {
    std::perror("remote_capture_bench: write");
  }
  close(port_fd);
  char byte = 0;
  while (read(stop_fd, &byte, 1) > 0) {
  }
  stop.store(true);
  for (std::thread& thread : app) thread.join();
  (*server)->Shutdown();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  char logdir[] = "/tmp/remote_capture_bench-XXXXXX";
  if (mkdtemp(logdir) == nullptr) {
    std::perror("remote_capture_bench: mkdtemp");
    return 1;
  }
  int port_pipe[2];
  int stop_pipe[2];
  if (pipe(port_pipe) != 0 || pipe(stop_pipe) != 0) {
    std::perror("remote_capture_bench: pipe");
    return 1;
  }
  // Before any gRPC or thread exists in this process.
  const pid_t child = fork();
  if (child < 0) {
    std::perror("remote_capture_bench: fork");
    return 1;
  }
  if (child == 0) {
    close(port_pipe[0]);
    close(stop_pipe[1]);
    std::exit(ServeProfiledProgram(flags, logdir, port_pipe[1], stop_pipe[0]));
  }
  close(port_pipe[1]);
  close(stop_pipe[0]);
  int port = 0;
  if (read(port_pipe[0], &port, sizeof(port)) != static_cast<ssize_t>(sizeof(port))) {
    std::fprintf(stderr, "remote_capture_bench: the profiled program did not start\n");
    waitpid(child, nullptr, 0);
    return 1;
  }
  close(port_pipe[0]);

  neuronprof::CaptureOptions options;
  options.service_addresses = {"127.0.0.1:" + std::to_string(port)};
  options.logdir = logdir;
  options.duration_ms = flags.duration_ms;
  options.num_tracing_attempts = 1;
  options.write_chrome_trace = flags.chrome_trace;
  options.write_pytorch_trace = flags.kineto;
  const bool chrome = options.write_chrome_trace.value_or(!options.write_pytorch_trace);

  std::printf("window %lld ms, %lld events/s on %d app threads, chrome trace %s, kineto %s\n",
              static_cast<long long>(flags.duration_ms), static_cast<long long>(flags.rate),
              flags.threads, chrome ? "on" : "off", flags.kineto ? "on" : "off");
  // server: window over to first response byte, of which collect is what
  // the server reports for Stop(); xplane / write: response received to
  // <host>.xplane.pb written / to every file written.
  const char* const kColumns[] = {"events",  "total", "after",  "server", "collect",
                                  "receive", "MB",    "xplane", "write"};
  std::printf("%5s", "round");
  for (const char* column : kColumns) std::printf(" %8s", column);
  std::printf("\n");
  std::vector<std::vector<double>> columns(std::size(kColumns));
  int failures = 0;
  for (int round = 1; round <= flags.rounds; ++round) {
    options.run_name = "round_" + std::to_string(round);
    const auto start = Clock::now();
    auto result = neuronprof::Capture(options);
    const double total_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.ok() || !result->all_ok()) {
      std::fprintf(
          stderr, "round %d failed: %s\n", round,
          std::string(result.ok() ? result->hosts[0].status.message() : result.status().message())
              .c_str());
      ++failures;
      continue;
    }
    const neuronprof::HostCaptureResult& host = result->hosts[0];
    const neuronprof::HostCaptureTimings& t = host.timings;
    const double row[] = {static_cast<double>(host.events),
                          total_ms,
                          total_ms - static_cast<double>(flags.duration_ms),
                          static_cast<double>(t.server_ms),
                          static_cast<double>(t.server_collect_ms),
                          static_cast<double>(t.receive_ms),
                          t.response_bytes / 1e6,
                          static_cast<double>(t.xplane_written_ms),
                          static_cast<double>(t.write_ms)};
    std::printf("%5d", round);
    for (size_t i = 0; i < columns.size(); ++i) {
      std::printf(" %8.*f", i == 6 ? 1 : 0, row[i]);
      columns[i].push_back(row[i]);
    }
    std::printf("\n");
    neuronprof::exporter::RemoveTree(result->run_dir);
  }
  if (!columns[0].empty()) {
    std::printf("%5s", "med");
    for (size_t i = 0; i < columns.size(); ++i) {
      std::printf(" %8.*f", i == 6 ? 1 : 0, Median(columns[i]));
    }
    std::printf("\n");
  }
  close(stop_pipe[1]);  // The profiled program ends.
  int status = 0;
  waitpid(child, &status, 0);
  neuronprof::exporter::RemoveTree(logdir);
  return failures == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
