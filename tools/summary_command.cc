#include "tools/summary_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "proto/xplane.pb.h"
#include "src/analysis/summary_report.h"
#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "src/export/xspace_file.h"

namespace neuronprof {
namespace tools {
namespace {

namespace fs = std::filesystem;

int Usage(const std::string& message) {
  std::fprintf(stderr, "neuronprof: %s\nusage: neuronprof summary ...\n%s", message.c_str(),
               NEURONPROF_SUMMARY_USAGE);
  return 2;
}

int Fail(const std::string& message) {
  std::fprintf(stderr, "neuronprof: %s\n", message.c_str());
  return 1;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The <host>.xplane.pb files directly in `dir`, sorted.
std::vector<fs::path> XPlaneFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file(ec) && EndsWith(entry.path().filename().string(),
                                              exporter::kXPlaneSuffix)) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string HostOf(const fs::path& file) {
  const std::string name = file.filename().string();
  return name.substr(0, name.size() - std::string(exporter::kXPlaneSuffix).size());
}

// A file as given; a run folder's host file; a logdir's newest run (by
// modification time, then name).
absl::StatusOr<fs::path> ResolveInput(const std::string& input, const std::string& host) {
  std::error_code ec;
  const fs::path path(input);
  if (!fs::exists(path, ec)) return absl::NotFoundError(absl::StrCat("'", input, "' does not exist"));
  if (!fs::is_directory(path, ec)) {
    if (!host.empty()) {
      return absl::InvalidArgumentError("--host applies to a logdir or run folder, not a file");
    }
    return path;
  }
  fs::path run = path;
  std::vector<fs::path> files = XPlaneFiles(run);
  const fs::path profile_root = path / "plugins" / "profile";
  if (files.empty() && fs::is_directory(profile_root, ec)) {
    fs::file_time_type newest{};
    bool found = false;
    for (const auto& entry : fs::directory_iterator(profile_root, ec)) {
      if (!entry.is_directory(ec) || XPlaneFiles(entry.path()).empty()) continue;
      const auto time = fs::last_write_time(entry.path(), ec);
      if (!found || time > newest || (time == newest && entry.path() > run)) {
        newest = time;
        run = entry.path();
        found = true;
      }
    }
    if (!found) {
      return absl::NotFoundError(absl::StrCat("logdir '", input, "' has no run with a ",
                                              exporter::kXPlaneSuffix, " file under ",
                                              profile_root.string()));
    }
    files = XPlaneFiles(run);
  }
  if (files.empty()) {
    return absl::NotFoundError(absl::StrCat("no ", exporter::kXPlaneSuffix, " file in '", input,
                                            "' (give a file, a run folder or a logdir)"));
  }
  std::vector<std::string> hosts;
  for (const fs::path& f : files) hosts.push_back(HostOf(f));
  if (!host.empty()) {
    for (const fs::path& f : files) {
      if (HostOf(f) == host) return f;
    }
    return absl::NotFoundError(absl::StrCat("run '", run.string(), "' has no host '", host,
                                            "' (hosts: ", absl::StrJoin(hosts, ", "), ")"));
  }
  if (files.size() > 1) {
    return absl::InvalidArgumentError(absl::StrCat("run '", run.string(), "' has ", files.size(),
                                                   " hosts (", absl::StrJoin(hosts, ", "),
                                                   "): pick one with --host NAME"));
  }
  return files.front();
}

}  // namespace

int SummaryCommand(const std::vector<std::string>& args) {
  std::string input, csv, host;
  int top = 20;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i], value;
    const bool flag = arg.rfind("--", 0) == 0;
    const size_t equals = arg.find('=');
    if (flag && equals != std::string::npos) {
      value = arg.substr(equals + 1);
      arg.resize(equals);
    } else if (flag && (arg == "--top" || arg == "--csv" || arg == "--host")) {
      if (i + 1 >= args.size()) return Usage(absl::StrCat(arg, " needs a value"));
      value = args[++i];
    }
    if (arg == "--top") {
      if (!absl::SimpleAtoi(value, &top) || top < 0) {
        return Usage(absl::StrCat("--top needs a whole number >= 0, got '", value, "'"));
      }
    } else if (arg == "--csv") {
      if (value.empty()) return Usage("--csv needs a path or '-'");
      csv = value;
    } else if (arg == "--host") {
      host = value;
    } else if (flag) {
      return Usage(absl::StrCat("unknown flag '", arg, "'"));
    } else if (input.empty()) {
      input = arg;
    } else {
      return Usage(absl::StrCat("unexpected argument '", arg, "'"));
    }
  }
  if (input.empty()) return Usage("summary needs a logdir, run folder or .xplane.pb file");

  auto file = ResolveInput(input, host);
  if (!file.ok()) return Fail(std::string(file.status().message()));
  auto read = exporter::ReadXSpaceFile(file->string());
  if (!read.ok()) return Fail(std::string(read.status().message()));
  const tensorflow::profiler::XSpace& space = *read;
  if (space.planes_size() == 0) {
    return Fail(absl::StrCat("'", file->string(), "' holds no planes"));
  }

  const analysis::Summary summary = analysis::Summarize(space);
  const std::string csv_text = csv.empty() ? "" : analysis::FormatOpTableCsv(summary.table);
  if (csv == "-") {
    std::fputs(csv_text.c_str(), stdout);
    return 0;
  }
  if (!csv.empty()) {
    if (auto s = exporter::WriteFileAtomically(csv, csv_text); !s.ok()) {
      return Fail(std::string(s.message()));
    }
  }
  std::printf("%s\n\n%s", file->string().c_str(),
              analysis::FormatSummaryText(summary, top).c_str());
  if (!csv.empty()) std::printf("\nwrote %s\n", csv.c_str());
  return 0;
}

}  // namespace tools
}  // namespace neuronprof
