// The neuronprof command line: `neuronprof --help` and
// `neuronprof <command> --help` list the commands and their options.
// Every command that reads takes a logdir, a run folder or a file
// (tools/capture_input.h); none writes over a file without --force.
//   neuronprof info <input>                planes, lines, events, warnings
//   neuronprof convert <input> [--out FILE] [--format chrome|kineto] [--force]
//                                           Chrome or Kineto trace (.json or .json.gz)
//   neuronprof capture --service_addr HOST:PORT[-PORT][,...] [--logdir DIR] [--duration_ms N]
//                                           remote capture from ProfilerService servers
//   neuronprof summary <logdir|run|file>   operator table, time share, steps
//   neuronprof version
// Exit status: 0 ok, 1 failure, 2 usage error.
#include <functional>

#include "CLI/CLI.hpp"
#include "tools/capture_command.h"
#include "tools/cli_output.h"
#include "tools/convert_command.h"
#include "tools/info_command.h"
#include "tools/summary_command.h"

namespace {

using neuronprof::tools::kExitOk;
using neuronprof::tools::Print;
using neuronprof::tools::Usage;
using neuronprof::tools::UsageMessage;

constexpr char kVersion[] = "neuronprof 0.1.0";

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli("neuronprof: read, convert, summarize and capture profiles (.xplane.pb)",
               "neuronprof");
  cli.set_version_flag("--version", kVersion);
  cli.require_subcommand(1);
  cli.footer(
      "Run 'neuronprof <command> --help' for a command's options. Exit status: 0 ok, "
      "1 failure, 2 usage error.");
  // The named command's callback sets what runs it once parsing is done.
  std::function<int()> run;
  neuronprof::tools::AddInfoCommand(cli, run);
  neuronprof::tools::AddConvertCommand(cli, run);
  neuronprof::tools::AddCaptureCommand(cli, run);
  neuronprof::tools::AddSummaryCommand(cli, run);
  cli.add_subcommand("version", "print the version")->callback([&run] {
    run = [] {
      Print("{}\n", kVersion);
      return kExitOk;
    };
  });
  // `neuronprof help`: the same text as --help.
  cli.add_subcommand("help", "")->group("")->callback([&run, &cli] {
    run = [&cli] {
      Print("{}", cli.get_formatter()->make_help(&cli, cli.get_name(), CLI::AppFormatMode::Normal));
      return kExitOk;
    };
  });
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == kExitOk) return cli.exit(error);  // --help, --version
    const CLI::App* command = &cli;
    while (!command->get_subcommands().empty()) command = command->get_subcommands().front();
    return Usage(*command, UsageMessage(*command, error));
  }
  return run();
}
