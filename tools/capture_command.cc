#include "tools/capture_command.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "fmt/format.h"
#include "neuronprof/capture.h"
#include "src/rpc/service_address.h"
#include "tools/cli_output.h"

namespace neuronprof {
namespace tools {
namespace {

// Progress on stderr: rewritten in place on a terminal; elsewhere only
// with --progress (scripts' stderr stays clean), one line per stage change
// and per second so logs stay short.
class ProgressPrinter {
 public:
  explicit ProgressPrinter(bool forced)
      : tty_(isatty(fileno(stderr)) != 0), enabled_(tty_ || forced) {}

  void operator()(const CaptureProgress& progress) {
    if (!enabled_) return;
    if (progress.finished) {
      const HostCaptureResult& host = *progress.finished;
      EndLine();
      // A failure's cause is printed once, in the results (FAILED ...).
      if (host.status.ok()) {
        fmt::print(stderr, "neuronprof: {} finished: {} events\n", host.address, host.events);
      }
      return;
    }
    // Each host's stage: what the capture is waiting for. A change of
    // stage is printed at once, figures once a second.
    std::string line, stage_names;
    for (const auto& host : progress.hosts) {
      std::string stage = HostCaptureStateName(host.state);
      stage_names += stage + ";";
      if (host.state == HostCaptureState::kWindow) {
        stage = fmt::format("window {:.1f} s / {:.1f} s",
                            std::min(host.window_elapsed_ms, progress.duration_ms) / 1000.0,
                            progress.duration_ms / 1000.0);
        if (host.attempt > 1) stage += fmt::format(" (attempt {})", host.attempt);
      } else if (host.state == HostCaptureState::kReceiving && host.response_bytes > 0) {
        stage = host.response_bytes >= 1000000
                    ? fmt::format("receiving {:.1f} MB", host.response_bytes / 1e6)
                    : fmt::format("receiving {:.0f} kB", host.response_bytes / 1e3);
      }
      if (!line.empty()) line += ", ";
      if (progress.hosts.size() > 1) line += host.address + ": ";
      line += stage;
    }
    if (tty_) {
      fmt::print(stderr, "\r{}\033[K", line);
      open_line_ = true;
    } else if (progress.elapsed_ms / 1000 != last_second_ || stage_names != last_stages_) {
      last_second_ = progress.elapsed_ms / 1000;
      last_stages_ = stage_names;
      fmt::print(stderr, "{}\n", line);
    }
    std::fflush(stderr);
  }

  void EndLine() {
    if (open_line_) std::fputc('\n', stderr);
    open_line_ = false;
  }

 private:
  const bool tty_;
  const bool enabled_;
  bool open_line_ = false;
  int64_t last_second_ = -1;
  std::string last_stages_;
};

// `capture`'s options as given; the service addresses are one
// comma-separated value.
struct CaptureArgs {
  std::string service_addr;
  bool progress = false;  // Progress lines on stderr when it is not a terminal.
  CaptureOptions options;
};

int RunCapture(const CLI::App& command, CaptureArgs& args) {
  CaptureOptions& options = args.options;
  // Port ranges (host:9012-9015, the ranks of one host) become one address
  // per port, so that progress and results name each server.
  for (absl::string_view entry : absl::StrSplit(args.service_addr, ',')) {
    auto addresses = rpc::ParseServiceAddresses(std::string(entry));
    if (!addresses.ok() || addresses->size() == 1) {
      // As given: ValidateCaptureOptions names a bad one with its index.
      options.service_addresses.emplace_back(entry);
      continue;
    }
    for (const auto& address : *addresses) {
      options.service_addresses.push_back(address.address);
    }
  }
  // What the parser cannot check: addresses, names, and each limit again.
  if (auto s = ValidateCaptureOptions(options); !s.ok()) {
    return Usage(command, s.message());
  }

  // Host results arrive through progress reports too: they are all there
  // is when every host fails.
  ProgressPrinter printer(args.progress);
  std::vector<HostCaptureResult> finished;
  options.on_progress = [&](const CaptureProgress& progress) {
    if (progress.finished) finished.push_back(*progress.finished);
    printer(progress);
  };
  const size_t host_count = options.service_addresses.size();
  fmt::print(stderr, "neuronprof: capturing {} host{} for {} ms (up to {} attempt{})\n", host_count,
             host_count == 1 ? "" : "s", options.duration_ms, options.num_tracing_attempts,
             options.num_tracing_attempts == 1 ? "" : "s");
  auto result = Capture(options);
  printer.EndLine();

  std::vector<HostCaptureResult> hosts;
  if (result.ok()) {
    hosts = result->hosts;
  } else {
    // Back in the order they were given.
    for (const std::string& address : options.service_addresses) {
      for (const auto& host : finished) {
        if (absl::StripPrefix(address, "grpc://") == host.address) {
          hosts.push_back(host);
          break;
        }
      }
    }
  }
  int ok = 0;
  for (const HostCaptureResult& host : hosts) {
    if (host.status.ok()) {
      ++ok;
      Print("OK {} events={} attempts={} file={}\n", host.address, host.events, host.attempts,
            host.files.empty() ? "" : host.files[0]);
      if (host.clock_offset_measured) {
        // Host minus this machine's clock, already taken out of its files.
        Print("  clock_offset: {:+.3f} ms +- {:.3f} ms (aligned to this client's clock)\n",
              host.clock_offset_ns / 1e6, host.clock_offset_uncertainty_ns / 1e6);
      } else {
        Print(
            "  clock_offset: unmeasured (the server does not answer neuronprof's "
            "clock probe; its times are on its own clock)\n");
      }
      for (const std::string& file : host.files) {
        if (absl::EndsWith(file, ".pt.trace.json.gz")) Print("  kineto: {}\n", file);
      }
      for (const std::string& warning : host.warnings) {
        Print("  warning: {}\n", OneLine(warning));
      }
      for (size_t i = 0; i < host.empty_reasons.size(); ++i) {
        Print("  attempt {} was empty: {}\n", i + 1, OneLine(host.empty_reasons[i]));
      }
    } else {
      Print("FAILED {} attempts={} error={}\n", host.address, host.attempts,
            OneLine(std::string(host.status.message())));
    }
  }
  Print("captured {} of {} host{}\n", ok, host_count, host_count == 1 ? "" : "s");
  if (!result.ok()) {
    // Every host's failure is on its FAILED line; only a failure before any
    // host (the logdir, the run folder) has its own line.
    if (!hosts.empty()) return kExitFailure;
    std::fflush(stdout);
    return Fail(OneLine(std::string(result.status().message())));
  }
  Print("run_dir: {}\n", result->run_dir);
  Print("open with: xprof --logdir {0}   (or: tensorboard --logdir {0})\n", options.logdir);
  return result->all_ok() ? kExitOk : kExitFailure;
}

}  // namespace

void AddCaptureCommand(CLI::App& cli, std::function<int()>& run) {
  auto args = std::make_shared<CaptureArgs>();
  CaptureOptions& options = args->options;
  CLI::App* command = cli.add_subcommand(
      "capture",
      "capture every listed tensorflow.ProfilerService server (neuronprof, JAX, TensorFlow) "
      "at once into DIR/plugins/profile/<run>/");
  // The ranges are ValidateCaptureOptions's, which checks them again.
  command
      ->add_option("--service_addr", args->service_addr,
                   "the servers, comma-separated; \"grpc://\" prefixes are accepted; "
                   "HOST:LOW-HIGH is every port of a range (the ranks of a host: "
                   "ProfilerOptions::port + local_rank), at most 1024")
      ->type_name("HOST:PORT[-PORT][,HOST:PORT...]")
      ->required();
  command
      ->add_option("--logdir", options.logdir,
                   "where the run folder goes (as ProfilerOptions::logdir)")
      ->type_name("DIR")
      ->capture_default_str();
  command
      ->add_option("--duration_ms", options.duration_ms,
                   "the capture window (as CaptureOptions::duration_ms)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxCaptureDurationMs));
  command
      ->add_option("--num_tracing_attempts", options.num_tracing_attempts,
                   "tries per host while a capture comes back empty")
      ->type_name("K")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxTracingAttempts));
  command
      ->add_option("--host_tracer_level", options.host_tracer_level,
                   "0 off, 1 user markers, 2 info, 3 verbose")
      ->type_name("L")
      ->capture_default_str()
      ->check(CLI::Range(0, 3));
  command
      ->add_option("--device_tracer_level", options.device_tracer_level,
                   "0 no device collectors, 1 or 2 on")
      ->type_name("L")
      ->capture_default_str()
      ->check(CLI::Range(0, 2));
  command->add_option("--run_name", options.run_name, "the run folder (default: start time)")
      ->type_name("NAME");
  command->add_flag("--flight_recorder", options.flight_recorder_now,
                    "take each server's FlightRecorder's last DURATION_MS at once instead "
                    "of a window from now (neuronprof servers with a FlightRecorder)");
  command->add_flag("--kineto,!--no_kineto", options.write_pytorch_trace,
                    "also write DIR/<run>/<host>.pt.trace.json.gz per host (rank), for the "
                    "PyTorch profiler TensorBoard plugin and HTA, as a Profiler does (on by "
                    "default; --no_kineto or --kineto=false: not)");
  command->add_flag_function(
      "--chrome_trace,!--no_chrome_trace",
      [args](int64_t count) { args->options.write_chrome_trace = count > 0; },
      "also write <host>.trace.json.gz beside each .xplane.pb (Chrome trace format); by "
      "default only with --no_kineto: Perfetto and chrome://tracing open the Kineto trace");
  command->add_flag("--progress", args->progress,
                    "print each host's stage on stderr (window, server collecting, receiving "
                    "N MB, writing) also when stderr is not a terminal (on a terminal: always, "
                    "as one line rewritten in place)");
  command
      ->add_option("--max_parallel_hosts", options.max_parallel_hosts,
                   "hosts reading and writing their profile at once (every window still "
                   "opens at once)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxParallelHosts));
  command
      ->add_option("--response_timeout_ms", options.response_timeout_ms,
                   "a host fails when its profile has not arrived this long after the "
                   "window")
      ->type_name("MS")
      ->capture_default_str()
      ->check(CLI::Range(int64_t{1}, kMaxCaptureDurationMs));
  command
      ->add_option("--connect_attempts", options.connect_attempts,
                   "connection tries per host before its window (250 ms, 500 ms, ... "
                   "apart)")
      ->type_name("K")
      ->capture_default_str()
      ->check(CLI::Range(1, kMaxConnectAttempts));
  command->footer(
      "Options take --flag value or --flag=value. Exit status: 0 all hosts "
      "captured, 1 some failed, 2 usage error.");
  command->callback(
      [command, args, &run] { run = [command, args] { return RunCapture(*command, *args); }; });
}

}  // namespace tools
}  // namespace neuronprof
