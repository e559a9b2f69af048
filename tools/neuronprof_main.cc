// The neuronprof command line.
//   neuronprof info <file.xplane.pb>       planes, lines, events, warnings
//   neuronprof convert <file.xplane.pb> [--out FILE]
//                                           Chrome trace (.json or .json.gz)
//   neuronprof version
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "proto/xplane.pb.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/xplane/names.h"

namespace {

using tensorflow::profiler::XSpace;

constexpr char kUsage[] =
    "usage: neuronprof <command> [args]\n"
    "\n"
    "commands:\n"
    "  info FILE.xplane.pb              summary of planes, lines, events, warnings\n"
    "  convert FILE.xplane.pb [--out OUT]\n"
    "                                   write a Chrome/Perfetto trace; OUT ending in\n"
    "                                   .gz is gzipped (default: FILE.trace.json.gz)\n"
    "  version                          print the version\n";

int Fail(const std::string& message) {
  std::fprintf(stderr, "neuronprof: %s\n", message.c_str());
  return 1;
}

bool LoadSpace(const std::string& path, XSpace* space, std::string* error) {
  auto data = neuronprof::exporter::ReadFile(path);
  if (!data.ok()) {
    *error = std::string(data.status().message());
    return false;
  }
  if (!space->ParseFromString(*data)) {
    *error = absl::StrCat("'", path, "' is not an XSpace (.xplane.pb) file");
    return false;
  }
  return true;
}

int Info(const std::vector<std::string>& args) {
  if (args.size() != 1) return Fail(absl::StrCat("info takes one file\n", kUsage));
  XSpace space;
  std::string error;
  if (!LoadSpace(args[0], &space, &error)) return Fail(error);
  std::printf("%s\n", args[0].c_str());
  for (const auto& host : space.hostnames()) std::printf("host: %s\n", host.c_str());
  for (const auto& plane : space.planes()) {
    int64_t events = 0;
    for (const auto& line : plane.lines()) events += line.events_size();
    std::printf("plane %s: %d lines, %lld events\n", plane.name().c_str(),
                plane.lines_size(), static_cast<long long>(events));
    for (const auto& line : plane.lines()) {
      std::printf("  line %lld %s: %d events\n", static_cast<long long>(line.id()),
                  line.name().c_str(), line.events_size());
    }
  }
  for (const auto& warning : space.warnings()) {
    std::printf("warning: %s\n", warning.c_str());
  }
  for (const auto& e : space.errors()) std::printf("error: %s\n", e.c_str());
  return 0;
}

int Convert(const std::vector<std::string>& args) {
  std::string input, output;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out" && i + 1 < args.size()) {
      output = args[++i];
    } else if (input.empty() && !absl::StartsWith(args[i], "--")) {
      input = args[i];
    } else {
      return Fail(absl::StrCat("unexpected argument '", args[i], "'\n", kUsage));
    }
  }
  if (input.empty()) return Fail(absl::StrCat("convert needs a file\n", kUsage));
  if (output.empty()) {
    output = input;
    if (absl::EndsWith(output, ".xplane.pb")) {
      output.resize(output.size() - std::strlen(".xplane.pb"));
    }
    output += ".trace.json.gz";
  }
  XSpace space;
  std::string error;
  if (!LoadSpace(input, &space, &error)) return Fail(error);
  std::string json = neuronprof::exporter::XSpaceToChromeTraceJson(space);
  if (absl::EndsWith(output, ".gz")) {
    auto compressed = neuronprof::exporter::GzipCompress(json);
    if (!compressed.ok()) return Fail(std::string(compressed.status().message()));
    json = std::move(*compressed);
  }
  if (auto s = neuronprof::exporter::WriteFileAtomically(output, json); !s.ok()) {
    return Fail(std::string(s.message()));
  }
  std::printf("wrote %s\n", output.c_str());
  return 0;
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
