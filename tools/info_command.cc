#include "tools/info_command.h"

#include <memory>
#include <string>

#include "src/export/xspace_file.h"
#include "tools/capture_input.h"
#include "tools/cli_output.h"
#include "tools/info_text.h"

namespace neuronprof {
namespace tools {

void AddInfoCommand(CLI::App& cli, std::function<int()>& run) {
  auto file = std::make_shared<std::string>();
  CLI::App* command =
      cli.add_subcommand("info", "summary of a capture: hosts, planes, lines, events, warnings");
  command->add_option("input", *file, kCaptureInputHelp)
      ->type_name("LOGDIR|RUN_DIR|FILE")
      ->required();
  command->footer("Exit status: 0 ok, 1 bad input (unreadable, corrupt or empty), 2 usage error.");
  command->callback([file, &run] {
    run = [file] {
      auto input = ResolveWithNote(*file);
      if (!input.ok()) return Fail(input.status().message());
      bool first = true;
      for (const auto& path : input->files) {
        auto space = exporter::ReadXSpaceFile(path.string());
        if (!space.ok()) return Fail(space.status().message());
        Print("{}{}\n{}", first ? "" : "\n", path.string(), FormatInfo(*space));
        first = false;
      }
      return kExitOk;
    };
  });
}

}  // namespace tools
}  // namespace neuronprof
