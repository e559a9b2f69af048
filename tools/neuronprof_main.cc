// The neuronprof command line.
//   neuronprof info <file.xplane.pb>       planes, lines, events, warnings
//   neuronprof convert <file.xplane.pb> [--out FILE] [--format chrome|kineto]
//                                           Chrome or Kineto trace (.json or .json.gz)
//   neuronprof capture --service_addr HOST:PORT[,...] --logdir DIR --duration_ms N
//                                           remote capture from ProfilerService servers
//   neuronprof version
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "neuronprof/capture.h"
#include "proto/xplane.pb.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/kineto_trace.h"
#include "src/export/xspace_file.h"
#include "src/xplane/names.h"
#include "tools/info_command.h"
#include "tools/summary_command.h"

namespace {

using tensorflow::profiler::XSpace;

constexpr char kUsage[] =
    "usage: neuronprof <command> [args]\n"
    "\n"
    "commands:\n"
    "  info FILE.xplane.pb              summary of planes, lines, events, warnings\n"
    "  convert FILE.xplane.pb [--out|-o OUT] [--format chrome|kineto]\n"
    "                                   write a Chrome/Perfetto trace, or with kineto the\n"
    "                                   PyTorch profiler's trace (TensorBoard plugin, HTA;\n"
    "                                   the default for OUT named *.pt.trace.json[.gz]);\n"
    "                                   OUT ending in .gz is gzipped (default:\n"
    "                                   FILE.trace.json.gz / FILE.pt.trace.json.gz)\n"
    "  capture --service_addr HOST:PORT[,HOST:PORT...] --logdir DIR --duration_ms N\n"
    "          [--num_tracing_attempts K] [--host_tracer_level L]\n"
    "          [--device_tracer_level L] [--run_name NAME]\n"
    "                                   capture every listed tensorflow.ProfilerService\n"
    "                                   server (neuronprof, JAX, TensorFlow) at once into\n"
    "                                   DIR/plugins/profile/<run>/; \"grpc://\" prefixes\n"
    "                                   are accepted; --flag=value works too. Exit 0: all\n"
    "                                   hosts captured, 1: some failed, 2: usage error\n"
    NEURONPROF_SUMMARY_USAGE
    "  version                          print the version\n";

int Usage(const std::string& message) {
  std::fprintf(stderr, "neuronprof: %s\n%s", message.c_str(), kUsage);
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "neuronprof: %s\n", message.c_str());
  return 1;
}

bool LoadSpace(const std::string& path, XSpace* space, std::string* error) {
  auto read = neuronprof::exporter::ReadXSpaceFile(path);
  if (!read.ok()) {
    *error = std::string(read.status().message());
    return false;
  }
  *space = std::move(*read);
  return true;
}

int Info(const std::vector<std::string>& args) {
  if (args.size() != 1) return Fail(absl::StrCat("info takes one file\n", kUsage));
  XSpace space;
  std::string error;
  if (!LoadSpace(args[0], &space, &error)) return Fail(error);
  // fwrite: a name holding a NUL byte must not cut the rest short.
  const std::string text = absl::StrCat(args[0], "\n", neuronprof::tools::FormatInfo(space));
  std::fwrite(text.data(), 1, text.size(), stdout);
  return 0;
}

int Convert(const std::vector<std::string>& args) {
  std::string input, output, format;
  for (size_t i = 0; i < args.size(); ++i) {
    if ((args[i] == "--out" || args[i] == "-o") && i + 1 < args.size()) {
      output = args[++i];
    } else if (args[i] == "--format" && i + 1 < args.size()) {
      format = args[++i];
    } else if (input.empty() && !absl::StartsWith(args[i], "--")) {
      input = args[i];
    } else {
      return Fail(absl::StrCat("unexpected argument '", args[i], "'\n", kUsage));
    }
  }
  if (input.empty()) return Fail(absl::StrCat("convert needs a file\n", kUsage));
  // Without --format, an OUT named *.pt.trace.json[.gz] asks for Kineto.
  if (format.empty()) {
    format = absl::EndsWith(output, ".pt.trace.json") ||
                     absl::EndsWith(output, ".pt.trace.json.gz")
                 ? "kineto"
                 : "chrome";
  }
  if (format != "chrome" && format != "kineto") {
    return Fail(absl::StrCat("unknown --format '", format, "': use chrome or kineto\n", kUsage));
  }
  if (output.empty()) {
    output = input;
    if (absl::EndsWith(output, ".xplane.pb")) {
      output.resize(output.size() - std::strlen(".xplane.pb"));
    }
    output += format == "kineto" ? ".pt.trace.json.gz" : ".trace.json.gz";
  }
  XSpace space;
  std::string error;
  if (!LoadSpace(input, &space, &error)) return Fail(error);
  // Gzipped when OUT ends in .gz.
  const absl::Status s = format == "kineto"
                             ? neuronprof::exporter::WriteKinetoTraceFile(space, output)
                             : neuronprof::exporter::WriteChromeTraceFile(space, output);
  if (!s.ok()) {
    return Fail(std::string(s.message()));
  }
  std::printf("wrote %s\n", output.c_str());
  return 0;
}


// One line, so that each result stays on its own line of output.
std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// Progress on stderr: rewritten in place on a terminal, else one line per
// second so logs stay short.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(isatty(fileno(stderr)) != 0) {}

  void operator()(const neuronprof::CaptureProgress& progress) {
    if (progress.finished) {
      const neuronprof::HostCaptureResult& host = *progress.finished;
      EndLine();
      if (host.status.ok()) {
        std::fprintf(stderr, "neuronprof: %s finished: %lld events\n", host.address.c_str(),
                     static_cast<long long>(host.events));
      } else {
        std::fprintf(stderr, "neuronprof: %s failed: %s\n", host.address.c_str(),
                     OneLine(std::string(host.status.message())).c_str());
      }
      return;
    }
    int capturing = 0, connecting = 0, attempt = 0;
    int64_t window_ms = 0;
    for (const auto& host : progress.hosts) {
      if (host.state == neuronprof::HostCaptureState::kCapturing) {
        ++capturing;
        window_ms = std::max(window_ms, host.window_elapsed_ms);
        attempt = std::max(attempt, host.attempt);
      } else if (host.state == neuronprof::HostCaptureState::kConnecting) {
        ++connecting;
      }
    }
    std::string line;
    if (capturing > 0) {
      line = absl::StrFormat("capturing %d host%s: %.1f s / %.1f s", capturing,
                             capturing == 1 ? "" : "s",
                             std::min(window_ms, progress.duration_ms) / 1000.0,
                             progress.duration_ms / 1000.0);
      if (attempt > 1) absl::StrAppend(&line, " (attempt ", attempt, ")");
    } else if (connecting > 0) {
      line = absl::StrFormat("connecting to %d host%s", connecting, connecting == 1 ? "" : "s");
    } else {
      return;
    }
    if (tty_) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      open_line_ = true;
    } else if (progress.elapsed_ms / 1000 != last_second_) {
      last_second_ = progress.elapsed_ms / 1000;
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

  void EndLine() {
    if (open_line_) std::fputc('\n', stderr);
    open_line_ = false;
  }

 private:
  const bool tty_;
  bool open_line_ = false;
  int64_t last_second_ = -1;
};

// Parses "--name value" and "--name=value" into `values`.
bool ParseFlags(const std::vector<std::string>& args, const std::vector<std::string>& known,
                std::map<std::string, std::string>* values, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!absl::StartsWith(args[i], "--")) {
      *error = absl::StrCat("unexpected argument '", args[i], "'");
      return false;
    }
    std::string name = args[i].substr(2), value;
    const size_t equals = name.find('=');
    if (equals != std::string::npos) {
      value = name.substr(equals + 1);
      name.resize(equals);
    } else if (std::find(known.begin(), known.end(), name) != known.end()) {
      if (i + 1 >= args.size()) {
        *error = absl::StrCat("--", name, " needs a value");
        return false;
      }
      value = args[++i];
    }
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      *error = absl::StrCat("unknown flag '--", name, "'");
      return false;
    }
    (*values)[name] = value;
  }
  return true;
}

template <typename Int>
bool ParseNumber(const std::map<std::string, std::string>& values, const std::string& name,
                 Int* out, std::string* error) {
  auto it = values.find(name);
  if (it == values.end()) return true;
  if (!absl::SimpleAtoi(it->second, out)) {
    *error = absl::StrCat("--", name, " needs a whole number, got '", it->second, "'");
    return false;
  }
  return true;
}

int CaptureCommand(const std::vector<std::string>& args) {
  const std::vector<std::string> known = {
      "service_addr",      "logdir",              "duration_ms", "num_tracing_attempts",
      "host_tracer_level", "device_tracer_level", "run_name"};
  std::map<std::string, std::string> values;
  std::string error;
  if (!ParseFlags(args, known, &values, &error)) return Usage(error);
  for (const char* required : {"service_addr", "logdir", "duration_ms"}) {
    if (values.count(required) == 0) {
      return Usage(absl::StrCat("capture needs --", required));
    }
  }
  neuronprof::CaptureOptions options;
  options.service_addresses = absl::StrSplit(values["service_addr"], ',');
  options.logdir = values["logdir"];
  if (values.count("run_name") > 0) options.run_name = values["run_name"];
  if (!ParseNumber(values, "duration_ms", &options.duration_ms, &error) ||
      !ParseNumber(values, "num_tracing_attempts", &options.num_tracing_attempts, &error) ||
      !ParseNumber(values, "host_tracer_level", &options.host_tracer_level, &error) ||
      !ParseNumber(values, "device_tracer_level", &options.device_tracer_level, &error)) {
    return Usage(error);
  }
  if (auto s = neuronprof::ValidateCaptureOptions(options); !s.ok()) {
    return Usage(std::string(s.message()));
  }

  // Host results arrive through progress reports too: they are all there
  // is when every host fails.
  ProgressPrinter printer;
  std::vector<neuronprof::HostCaptureResult> finished;
  options.on_progress = [&](const neuronprof::CaptureProgress& progress) {
    if (progress.finished) finished.push_back(*progress.finished);
    printer(progress);
  };
  std::fprintf(stderr, "neuronprof: capturing %zu host%s for %lld ms (up to %d attempt%s)\n",
               options.service_addresses.size(),
               options.service_addresses.size() == 1 ? "" : "s",
               static_cast<long long>(options.duration_ms), options.num_tracing_attempts,
               options.num_tracing_attempts == 1 ? "" : "s");
  auto result = neuronprof::Capture(options);
  printer.EndLine();

  std::vector<neuronprof::HostCaptureResult> hosts;
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
  for (const neuronprof::HostCaptureResult& host : hosts) {
    if (host.status.ok()) {
      ++ok;
      std::printf("OK %s events=%lld attempts=%d file=%s\n", host.address.c_str(),
                  static_cast<long long>(host.events), host.attempts,
                  host.files.empty() ? "" : host.files[0].c_str());
      for (const std::string& warning : host.warnings) {
        std::printf("  warning: %s\n", OneLine(warning).c_str());
      }
      for (size_t i = 0; i < host.empty_reasons.size(); ++i) {
        std::printf("  attempt %zu was empty: %s\n", i + 1,
                    OneLine(host.empty_reasons[i]).c_str());
      }
    } else {
      std::printf("FAILED %s attempts=%d error=%s\n", host.address.c_str(), host.attempts,
                  OneLine(std::string(host.status.message())).c_str());
    }
  }
  std::printf("captured %d of %zu host%s\n", ok, options.service_addresses.size(),
              options.service_addresses.size() == 1 ? "" : "s");
  if (!result.ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "neuronprof: %s\n",
                 OneLine(std::string(result.status().message())).c_str());
    return 1;
  }
  std::printf("run_dir: %s\n", result->run_dir.c_str());
  std::printf("open with: xprof --logdir %s   (or: tensorboard --logdir %s)\n",
              options.logdir.c_str(), options.logdir.c_str());
  return result->all_ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string command = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (command == "info") return Info(args);
  if (command == "convert") return Convert(args);
  if (command == "capture") return CaptureCommand(args);
  if (command == "summary") return neuronprof::tools::SummaryCommand(args);
  if (command == "version" || command == "--version") {
    std::printf("neuronprof 0.1.0\n");
    return 0;
  }
  if (command == "help" || command == "--help" || command == "-h") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::fprintf(stderr, "neuronprof: unknown command '%s'\n%s", command.c_str(), kUsage);
  return 2;
}
