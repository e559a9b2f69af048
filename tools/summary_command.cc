#include "tools/summary_command.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "proto/xplane.pb.h"
#include "src/analysis/ranks/rank_report.h"
#include "src/analysis/report/device_sections.h"
#include "src/analysis/report/rank_sections.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/analysis/report/summary_tables.h"
#include "src/analysis/timeline/selection.h"
#include "src/export/atomic_file.h"
#include "src/export/logdir.h"
#include "src/export/xspace_file.h"
#include "src/xplane/job_identity.h"
#include "tools/capture_input.h"
#include "tools/cli_output.h"
#include "tools/summary_json.h"

namespace neuronprof {
namespace tools {
namespace {

namespace fs = std::filesystem;

using Input = CaptureInput;

// A note on stderr: something asked for that this capture cannot give.
void Note(const std::string& text) { fmt::print(stderr, "neuronprof: note: {}\n", text); }

// A CSV destination: a path, or "-" for stdout; never empty.
CLI::Validator PathOrStdout() {
  return CLI::Validator(
      [](std::string& value) { return value.empty() ? "needs a path or '-'" : ""; }, "",
      "NONEMPTY");
}

// A check of an option's text by a parser of analysis/timeline/selection.h.
template <typename Parse>
CLI::Validator RangeOf(Parse parse, const char* name) {
  return CLI::Validator(
      [parse](std::string& value) {
        auto parsed = parse(value);
        return parsed.ok() ? std::string() : std::string(parsed.status().message());
      },
      "", name);
}

struct SummaryArgs {
  std::string input, csv, memory_csv, kernel_csv, collectives_csv, host, folded;
  std::string table = "operators", csv_dir, json, steps, window_ms;
  bool by_thread = false, by_thread_group = false, force = false;
  int top = 20;
  analysis::PeakOptions peaks;

  analysis::Selection selection() const {
    analysis::Selection out;
    if (!steps.empty()) out.steps = *analysis::ParseStepRange(steps);
    if (!window_ms.empty()) out.window_ms = *analysis::ParseWindowMs(window_ms);
    return out;
  }
  analysis::GroupBy group_by() const {
    return by_thread         ? analysis::GroupBy::kThread
           : by_thread_group ? analysis::GroupBy::kThreadGroup
                             : analysis::GroupBy::kName;
  }
};

// Writes `text` to `path` (never over an existing file without --force),
// or to stdout for "-". Empty status when done.
absl::Status WriteCsv(const std::string& path, const std::string& text, bool force) {
  if (path == "-") {
    fmt::print("{}", text);  // Data, not text for a terminal: exact bytes.
    return absl::OkStatus();
  }
  if (auto s = CheckOverwrite(path, force); !s.ok()) return s;
  return exporter::WriteFileAtomically(path, text);
}

int RunOneHost(const SummaryArgs& args, const Input& input);

// A run of several hosts that are not the ranks of one job: one section
// per host, each the host's full report.
int RunHosts(const SummaryArgs& args, const Input& input) {
  if (!args.csv.empty() || !args.memory_csv.empty() || !args.kernel_csv.empty() ||
      !args.csv_dir.empty() || !args.json.empty() || !args.folded.empty()) {
    return Fail(
        fmt::format("run '{}' holds {} hosts: --csv, --memory_csv, --kernel_csv, "
                    "--csv_dir, --json and --folded write one host's tables (add "
                    "--host NAME)",
                    input.run.string(), input.files.size()));
  }
  std::vector<std::string> hosts;
  for (const fs::path& f : input.files) hosts.push_back(HostOf(f));
  Print("{}: {} hosts ({}), one section each (--host NAME for one)\n", input.run.string(),
        hosts.size(), fmt::join(hosts, ", "));
  for (size_t i = 0; i < input.files.size(); ++i) {
    Print("\n=== host {} ({} of {}) ===\n", hosts[i], i + 1, hosts.size());
    std::fflush(stdout);
    if (int rc = RunOneHost(args, Input{input.run, {input.files[i]}, ""}); rc != kExitOk) {
      return rc;
    }
  }
  return kExitOk;
}

// The multi-rank report of a run whose hosts are the ranks of one job;
// one section per host when they are not.
int RunRanks(const SummaryArgs& args, const Input& input) {
  std::vector<analysis::RankData> ranks;
  std::vector<std::string> warnings;  // What each rank's capture lost.
  bool distributed = false;
  const analysis::Selection selection = args.selection();
  for (const fs::path& file : input.files) {
    auto read = exporter::ReadXSpaceFile(file.string());
    if (!read.ok()) return Fail(read.status().message());
    if (!selection.empty()) {
      auto selected = analysis::Select(*read, selection);
      if (!selected.ok()) {
        return Fail(fmt::format("{}: {}", file.string(), std::string(selected.status().message())));
      }
      *read = std::move(selected->space);
    }
    for (const std::string& warning : read->warnings()) {
      warnings.push_back(fmt::format("{}: {}", file.filename().string(), warning));
    }
    ranks.push_back(analysis::ReadRankData(*read, file.filename().string()));
    distributed = distributed || ranks.back().identity.distributed();
  }
  if (!distributed) return RunHosts(args, input);
  if (!args.memory_csv.empty() || !args.kernel_csv.empty() || !args.csv_dir.empty() ||
      !args.json.empty() || args.table != "operators" || args.by_thread || args.by_thread_group ||
      !args.folded.empty()) {
    return Fail(
        fmt::format("run '{}' holds several ranks: --memory_csv, --kernel_csv, "
                    "--csv_dir, --json, --folded, --table and --by_thread[_group] "
                    "apply to one "
                    "rank's report (add --host NAME)",
                    input.run.string()));
  }
  auto report = analysis::BuildRankReport(std::move(ranks));
  if (!report.ok()) {
    return Fail(
        fmt::format("run '{}': {}", input.run.string(), std::string(report.status().message())));
  }
  if (!args.csv.empty()) {
    if (auto s = WriteCsv(args.csv, analysis::FormatRankStepsCsv(*report), args.force); !s.ok()) {
      return Fail(s.message());
    }
  }
  if (!args.collectives_csv.empty()) {
    if (auto s =
            WriteCsv(args.collectives_csv, analysis::FormatCollectivesCsv(*report), args.force);
        !s.ok()) {
      return Fail(s.message());
    }
  }
  if (args.csv == "-" || args.collectives_csv == "-") return kExitOk;
  Print("{}\n\n", input.run.string());
  for (const std::string& warning : warnings) Print("warning: {}\n", OneLine(warning));
  if (!warnings.empty()) Print("\n");
  Print("{}", analysis::FormatRankReportText(*report, args.top));
  Print("\nOne rank's full report: --host {} (a file's name without {}).\n",
        HostOf(input.files.front()), exporter::kXPlaneSuffix);
  for (const std::string& path : {args.csv, args.collectives_csv}) {
    if (!path.empty()) Print("\nwrote {}\n", path);
  }
  return kExitOk;
}

// --csv (the table --table names), --csv_dir and --json of a single-host
// summary. kExitOk when every file was written.
int WriteTables(const SummaryArgs& args, const std::string& input, const std::string& selection,
                const analysis::Summary& summary) {
  if (args.csv.empty() && args.csv_dir.empty() && args.json.empty()) return kExitOk;
  const std::vector<analysis::ReportTable> tables = analysis::SummaryTables(summary);
  if (!args.csv.empty()) {
    for (const analysis::ReportTable& table : tables) {
      if (table.name != args.table) continue;
      if (table.rows.empty()) {
        Note(fmt::format("the {} table is empty; tables: {} (--table NAME)", table.name,
                         fmt::join(analysis::SummaryTableNames(), ", ")));
      }
      if (auto s = WriteCsv(args.csv, analysis::FormatCsv(table), args.force); !s.ok()) {
        return Fail(s.message());
      }
    }
  }
  if (!args.csv_dir.empty()) {
    std::error_code ec;
    fs::create_directories(args.csv_dir, ec);
    if (ec) return Fail(fmt::format("cannot create '{}': {}", args.csv_dir, ec.message()));
    for (const analysis::ReportTable& table : tables) {
      const std::string path = (fs::path(args.csv_dir) / (table.name + ".csv")).string();
      if (auto s = WriteCsv(path, analysis::FormatCsv(table), args.force); !s.ok()) {
        return Fail(s.message());
      }
    }
  }
  if (!args.json.empty()) {
    if (auto s = WriteCsv(args.json, SummaryJson(input, selection, summary, tables), args.force);
        !s.ok()) {
      return Fail(s.message());
    }
  }
  return kExitOk;
}

int RunSummary(const SummaryArgs& args) {
  auto input = ResolveWithNote(args.input, args.host);
  if (!input.ok()) return Fail(input.status().message());
  if (input->files.size() > 1) return RunRanks(args, *input);
  if (!args.collectives_csv.empty()) {
    return Fail("--collectives_csv applies to a run of several ranks");
  }
  return RunOneHost(args, *input);
}

// The report of one file (input->files holds one).
int RunOneHost(const SummaryArgs& args, const Input& input_value) {
  const Input* input = &input_value;
  const fs::path* file = &input->files.front();
  auto read = exporter::ReadXSpaceFile(file->string());
  if (!read.ok()) return Fail(read.status().message());
  if (read->planes_size() == 0) return Fail(fmt::format("'{}' holds no planes", file->string()));
  std::string selected_text;
  if (const analysis::Selection selection = args.selection(); !selection.empty()) {
    auto selected = analysis::Select(*read, selection);
    if (!selected.ok()) {
      return Fail(fmt::format("{}: {}", file->string(), std::string(selected.status().message())));
    }
    *read = std::move(selected->space);
    selected_text = std::move(selected->description);
  }
  const tensorflow::profiler::XSpace& space = *read;

  const analysis::Summary summary = analysis::Summarize(space, args.peaks, args.group_by());
  if (int rc = WriteTables(args, file->string(), selected_text, summary); rc != kExitOk) {
    return rc;
  }
  std::vector<std::string> written = {args.csv, args.json};
  // A table the capture cannot have (`missing`) is not written as a bare
  // header: a note says why, and no file appears.
  struct OptionalTable {
    const std::string& path;
    bool missing;
    const char* why;
    std::function<std::string()> format;
  };
  const OptionalTable optional_tables[] = {
      {args.memory_csv, summary.memory.empty(),
       "--memory_csv: nothing written: the capture has no allocation events (libtorch's "
       "allocator or a device plug-in's memory reports)",
       [&] { return analysis::FormatMemoryCsv(summary.memory); }},
      {args.kernel_csv, summary.device.planes.empty(),
       "--kernel_csv: nothing written: the capture has no device planes (no kernels or "
       "copies: a device plug-in or CUPTI records them, device_tracer_level >= 1)",
       [&] { return analysis::FormatKernelCsv(summary.kernels); }},
      {args.folded, summary.stacks.empty(),
       "--folded: nothing written: the capture has no call stacks (record them with "
       "NEURONPROF_SCOPE_STACK or TorchOperatorOptions::record_stacks)",
       [&] { return analysis::FormatFolded(summary.stacks); }},
  };
  for (const OptionalTable& table : optional_tables) {
    if (table.path.empty()) continue;
    if (table.missing) {
      Note(table.why);
      continue;
    }
    if (auto s = WriteCsv(table.path, table.format(), args.force); !s.ok()) {
      return Fail(s.message());
    }
    written.push_back(table.path);
  }
  // A table on stdout is the whole output, so it can be piped.
  if (args.csv == "-" || args.memory_csv == "-" || args.kernel_csv == "-" || args.json == "-" ||
      args.folded == "-") {
    return kExitOk;
  }
  Print("{}\n\n", file->string());
  if (!selected_text.empty()) Print("Selection: {}\n\n", selected_text);
  // The only file of a run whose job had several ranks: the others are gone.
  const xplane::JobIdentity identity = xplane::ReadJobIdentity(space);
  if (args.host.empty() && !input->run.empty() && identity.distributed()) {
    // Ranges: the file's world size is a claim, not data to allocate for.
    const auto missing = analysis::MissingRanks(identity.world_size, {identity.rank});
    const bool one = analysis::RankCount(missing) == 1;
    Print(
        "MISSING: this run holds only rank {} of world size {}: rank{} {} {} no file "
        "(a rank that died or was not captured)\n\n",
        identity.rank, identity.world_size, one ? "" : "s", analysis::FormatRanks(missing),
        one ? "has" : "have");
  }
  Print("{}", analysis::FormatSummaryText(summary, args.top));
  for (const std::string& path : written) {
    if (!path.empty()) Print("\nwrote {}\n", path);
  }
  if (!args.csv_dir.empty()) {
    Print("\nwrote {} tables to {}/ (<table>.csv)\n", analysis::SummaryTableNames().size(),
          args.csv_dir);
  }
  return kExitOk;
}

}  // namespace

void AddSummaryCommand(CLI::App& cli, std::function<int()>& run) {
  auto args = std::make_shared<SummaryArgs>();
  CLI::App* command = cli.add_subcommand(
      "summary",
      "operator table (PyProf columns) with device time per op, time share per op, step-time "
      "breakdown, markers, steps and async spans per name (self time, p50/p90/p99/max), the "
      "tail of each step and async span name explained (queue waits between producer and "
      "consumer included), counters (min/mean/max/last, time-weighted mean), instants, "
      "memory (peak, by operator, per step), kernels, utilisation against peaks and "
      "recommendations of a capture; for a run of a distributed job's ranks, compute, "
      "communication and waiting per rank and step, the straggler and the collectives");
  command->add_option("input", args->input, kCaptureInputHelp)
      ->type_name("LOGDIR|RUN_DIR|FILE")
      ->required();
  command->add_option("--top", args->top, "rows and steps shown (0: all)")
      ->type_name("N")
      ->capture_default_str()
      ->check(CLI::Range(0, std::numeric_limits<int>::max(), "NONNEGATIVE"));
  auto* csv = command
                  ->add_option("--csv", args->csv,
                               "also write one table as CSV, the one --table names ('-': "
                               "stdout only); for a run of several ranks, every rank's "
                               "every step")
                  ->type_name("PATH|-")
                  ->check(PathOrStdout());
  command->add_option("--table", args->table, "the table --csv writes")
      ->type_name("NAME")
      ->capture_default_str()
      ->check(CLI::IsMember(analysis::SummaryTableNames()))
      ->needs(csv);
  command
      ->add_option("--csv_dir", args->csv_dir,
                   "also write every table as DIR/<table>.csv (DIR is created)")
      ->type_name("DIR");
  command
      ->add_option("--json", args->json,
                   "also write the whole summary as one JSON document ('-': stdout only)")
      ->type_name("PATH|-")
      ->check(PathOrStdout());
  auto* by_thread =
      command->add_flag("--by_thread", args->by_thread,
                        "markers and step statistics: one row per thread instead of per name");
  command
      ->add_flag("--by_thread_group", args->by_thread_group,
                 "as --by_thread, threads whose names differ only in digits (worker-1, "
                 "worker-2: worker-*) sharing a row")
      ->excludes(by_thread);
  auto* steps =
      command
          ->add_option(
              "--steps", args->steps,
              "summarise only steps A to B (step numbers, both included) and the events that lie "
              "wholly inside their span")
          ->type_name("A-B")
          ->check(RangeOf(analysis::ParseStepRange, "STEPS"));
  command
      ->add_option("--window_ms", args->window_ms,
                   "summarise only the events that lie wholly inside A to B ms after the "
                   "capture's first event")
      ->type_name("A-B")
      ->check(RangeOf(analysis::ParseWindowMs, "WINDOW"))
      ->excludes(steps);
  command
      ->add_option("--memory_csv", args->memory_csv,
                   "also write the memory-by-operator table as CSV ('-': stdout only)")
      ->type_name("PATH|-")
      ->check(PathOrStdout());
  command
      ->add_option("--kernel_csv", args->kernel_csv,
                   "also write the kernel and copy/set table as CSV ('-': stdout only)")
      ->type_name("PATH|-")
      ->check(PathOrStdout());
  command
      ->add_option("--folded", args->folded,
                   "also write the recorded call stacks folded, weighted by self time in "
                   "ns, for flamegraph.pl or speedscope ('-': stdout only)")
      ->type_name("PATH|-")
      ->check(PathOrStdout());
  command
      ->add_option("--collectives_csv", args->collectives_csv,
                   "a run of several ranks: also write the collectives table as CSV ('-': "
                   "stdout only)")
      ->type_name("PATH|-")
      ->check(PathOrStdout());
  command
      ->add_option("--cpu_peak_gflops", args->peaks.cpu_peak_gflops,
                   "the CPU's peak GFLOP/s, for CPU MFU, roofline and the CPU BLAS check "
                   "(never probed)")
      ->type_name("GFLOPS")
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--cpu_peak_gbps", args->peaks.cpu_peak_gb_per_s,
                   "the CPU's memory bandwidth in GB/s, for the CPU roofline")
      ->type_name("GB/S")
      ->check(CLI::PositiveNumber);
  command->add_flag("--force", args->force,
                    "replace files that --csv, --csv_dir, --json, --memory_csv, --kernel_csv, "
                    "--folded and --collectives_csv name when they exist (else: an error, nothing "
                    "replaced)");
  command
      ->add_option("--host", args->host, "the host (or rank, <host>_rank<R>) of a run with several")
      ->type_name("NAME");
  command->footer(
      "A run folder whose files are the ranks of one distributed job (<host>_rank<R>, world "
      "size > 1) gets the multi-rank report: per rank and step compute, communication, "
      "overlap and idle time, the straggler the others waited for, and the collectives; "
      "a run of hosts that are not ranks gets one section per host.\n"
      "Exit status: 0 ok, 1 bad input (missing, unreadable, corrupt or empty; ranks of "
      "different world sizes, one rank twice, captures that do not overlap in time), "
      "2 usage error.");
  command->callback([args, &run] { run = [args] { return RunSummary(*args); }; });
}

}  // namespace tools
}  // namespace neuronprof
