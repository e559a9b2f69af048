#include "tools/capture_input.h"

#include <algorithm>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "src/export/kineto_trace.h"
#include "src/export/logdir.h"
#include "tools/cli_output.h"

namespace neuronprof {
namespace tools {
namespace {

namespace fs = std::filesystem;

// The files directly in `dir` whose names end in `suffix`, sorted.
std::vector<fs::path> FilesEndingIn(const fs::path& dir, const char* suffix) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && absl::EndsWith(entry.path().filename().string(), suffix)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<fs::path> XPlaneFiles(const fs::path& dir) {
  return FilesEndingIn(dir, exporter::kXPlaneSuffix);
}

// A logdir's newest run with a capture (by modification time, then name).
absl::StatusOr<fs::path> NewestRun(const std::string& input, const fs::path& profile_root) {
  std::error_code ec;
  fs::file_time_type newest{};
  fs::path run;
  for (const auto& entry : fs::directory_iterator(profile_root, ec)) {
    if (!entry.is_directory(ec) || XPlaneFiles(entry.path()).empty()) continue;
    const auto time = fs::last_write_time(entry.path(), ec);
    if (run.empty() || time > newest || (time == newest && entry.path() > run)) {
      newest = time;
      run = entry.path();
    }
  }
  if (run.empty()) {
    return absl::NotFoundError(fmt::format("logdir '{}' has no run with a {} file under {}", input,
                                           exporter::kXPlaneSuffix, profile_root.string()));
  }
  return run;
}

// A trace a capture wrote beside its .xplane.pb: <run>/<host>.trace.json.gz
// next to <run>/<host>.xplane.pb; <logdir>/<run>/<host>.pt.trace.json.gz
// for <logdir>/plugins/profile/<run>/<host>.xplane.pb.
absl::StatusOr<CaptureInput> FromTrace(const fs::path& path) {
  const std::string name = path.filename().string();
  const bool kineto = absl::EndsWith(name, exporter::kPyTorchTraceSuffix);
  const std::string host(absl::StripSuffix(
      name, kineto ? exporter::kPyTorchTraceSuffix : exporter::kChromeTraceSuffix));
  const fs::path dir = path.parent_path();
  const fs::path xplane = kineto ? dir.parent_path() / "plugins" / "profile" / dir.filename() /
                                       (host + exporter::kXPlaneSuffix)
                                 : dir / (host + exporter::kXPlaneSuffix);
  std::error_code ec;
  if (!fs::is_regular_file(xplane, ec)) {
    return absl::NotFoundError(fmt::format(
        "'{}' is a {} trace; neuronprof reads the .xplane.pb capture it was written from, "
        "and '{}' does not exist (give a .xplane.pb file, a run folder or a logdir)",
        path.string(), kineto ? "Kineto" : "Chrome", xplane.string()));
  }
  return CaptureInput{
      {},
      {xplane},
      fmt::format("reading {}, the capture {} was written from", xplane.string(), path.string())};
}

}  // namespace

std::string HostOf(const fs::path& file) {
  return std::string(absl::StripSuffix(file.filename().string(), exporter::kXPlaneSuffix));
}

absl::StatusOr<CaptureInput> ResolveCaptureInput(const std::string& input,
                                                 const std::string& host) {
  std::error_code ec;
  const fs::path path(input);
  if (!fs::exists(path, ec)) return absl::NotFoundError(fmt::format("'{}' does not exist", input));
  if (!fs::is_directory(path, ec)) {
    if (!host.empty()) {
      return absl::InvalidArgumentError("--host applies to a logdir or run folder, not a file");
    }
    const std::string name = path.filename().string();
    if (absl::EndsWith(name, exporter::kPyTorchTraceSuffix) ||
        absl::EndsWith(name, exporter::kChromeTraceSuffix)) {
      return FromTrace(path);
    }
    return CaptureInput{{}, {path}, ""};
  }
  CaptureInput out{path, XPlaneFiles(path), ""};
  const fs::path profile_root = path / "plugins" / "profile";
  if (out.files.empty() && fs::is_directory(profile_root, ec)) {
    auto run = NewestRun(input, profile_root);
    if (!run.ok()) return run.status();
    out.run = *run;
    out.files = XPlaneFiles(out.run);
  } else if (out.files.empty() && !FilesEndingIn(path, exporter::kPyTorchTraceSuffix).empty()) {
    // The PyTorch plugin's run folder, <logdir>/<run>: its capture is in
    // <logdir>/plugins/profile/<run>.
    const fs::path xprof_run = path.parent_path() / "plugins" / "profile" / path.filename();
    out.files = XPlaneFiles(xprof_run);
    if (out.files.empty()) {
      return absl::NotFoundError(fmt::format(
          "'{}' holds Kineto traces (.pt.trace.json.gz); neuronprof reads the .xplane.pb "
          "capture they were written from, and '{}' has none",
          input, xprof_run.string()));
    }
    out.run = xprof_run;
    out.note = fmt::format("reading {}, the run {} was written from", xprof_run.string(), input);
  }
  if (out.files.empty()) {
    return absl::NotFoundError(
        fmt::format("no {} file in '{}' (give a file, a run folder or a logdir)",
                    exporter::kXPlaneSuffix, input));
  }
  if (host.empty()) return out;
  std::vector<std::string> hosts;
  for (const fs::path& f : out.files) {
    if (HostOf(f) == host) return CaptureInput{out.run, {f}, out.note};
    hosts.push_back(HostOf(f));
  }
  return absl::NotFoundError(fmt::format("run '{}' has no host '{}' (hosts: {})", out.run.string(),
                                         host, fmt::join(hosts, ", ")));
}

absl::StatusOr<CaptureInput> ResolveWithNote(const std::string& input, const std::string& host) {
  auto resolved = ResolveCaptureInput(input, host);
  if (resolved.ok() && !resolved->note.empty()) {
    fmt::print(stderr, "neuronprof: {}\n", OneLine(resolved->note));
  }
  return resolved;
}

absl::Status CheckOverwrite(const std::string& path, bool force) {
  std::error_code ec;
  if (path == "-" || force || !fs::exists(fs::symlink_status(path, ec))) return absl::OkStatus();
  return absl::AlreadyExistsError(
      fmt::format("'{}' exists: add --force to replace it, or name another file", path));
}

}  // namespace tools
}  // namespace neuronprof
