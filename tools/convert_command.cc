#include "tools/convert_command.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "fmt/format.h"
#include "src/export/chrome_trace.h"
#include "src/export/kineto_trace.h"
#include "src/export/xspace_file.h"
#include "tools/capture_input.h"
#include "tools/cli_output.h"

namespace neuronprof {
namespace tools {
namespace {

struct ConvertArgs {
  std::string input, output, format;
  bool force = false;
};

// One capture file to its trace.
int ConvertFile(const std::string& input, ConvertArgs args) {
  // Without --format, an OUT named *.pt.trace.json[.gz] asks for Kineto.
  if (args.format.empty()) {
    args.format = absl::EndsWith(args.output, ".pt.trace.json") ||
                          absl::EndsWith(args.output, ".pt.trace.json.gz")
                      ? "kineto"
                      : "chrome";
  }
  const bool kineto = args.format == "kineto";
  if (args.output.empty()) {
    args.output = std::string(absl::StripSuffix(input, ".xplane.pb")) +
                  (kineto ? ".pt.trace.json.gz" : ".trace.json.gz");
  }
  // A capture's run already holds <host>.trace.json.gz: never replaced
  // unasked.
  if (auto s = CheckOverwrite(args.output, args.force); !s.ok()) {
    return Fail(s.message());
  }
  auto space = exporter::ReadXSpaceFile(input);
  if (!space.ok()) return Fail(space.status().message());
  // Streamed to the file; gzipped when OUT ends in .gz.
  const absl::Status s = kineto ? exporter::WriteKinetoTraceFile(*space, args.output)
                                : exporter::WriteChromeTraceFile(*space, args.output);
  if (!s.ok()) {
    return Fail(s.message());
  }
  Print("wrote {}\n", args.output);
  return kExitOk;
}

int RunConvert(const ConvertArgs& args) {
  auto input = ResolveWithNote(args.input);
  if (!input.ok()) return Fail(input.status().message());
  if (input->files.size() > 1 && !args.output.empty()) {
    return Fail(
        fmt::format("run '{}' holds {} hosts and --out names one file: give one "
                    "host's .xplane.pb, or leave out --out to convert each",
                    input->run.string(), input->files.size()));
  }
  for (const auto& file : input->files) {
    if (int rc = ConvertFile(file.string(), args); rc != kExitOk) return rc;
  }
  return kExitOk;
}

}  // namespace

void AddConvertCommand(CLI::App& cli, std::function<int()>& run) {
  auto args = std::make_shared<ConvertArgs>();
  CLI::App* command = cli.add_subcommand(
      "convert",
      "write a Chrome/Perfetto trace, or with --format kineto the PyTorch profiler's trace "
      "(TensorBoard plugin, HTA)");
  command->add_option("input", args->input, kCaptureInputHelp)
      ->type_name("LOGDIR|RUN_DIR|FILE")
      ->required();
  command->add_flag("--force", args->force, "replace OUT when it exists (else: an error)");
  command
      ->add_option("-o,--out", args->output,
                   "the trace; ending in .gz: gzipped (default: FILE.trace.json.gz, with "
                   "kineto FILE.pt.trace.json.gz, per host of a run; never over an existing "
                   "file without --force)")
      ->type_name("OUT");
  command
      ->add_option("--format", args->format,
                   "default: kineto for an OUT named *.pt.trace.json[.gz], else chrome")
      ->type_name("FORMAT")
      ->check(CLI::IsMember({"chrome", "kineto"}));
  command->footer("Exit status: 0 ok, 1 bad input or a failed write, 2 usage error.");
  command->callback([args, &run] { run = [args] { return RunConvert(*args); }; });
}

}  // namespace tools
}  // namespace neuronprof
