// `neuronprof info`: what a capture holds (hosts, planes, lines, event
// counts, warnings, errors), as text (info_text.h), per host of a run.
#ifndef NEURONPROF_TOOLS_INFO_COMMAND_H_
#define NEURONPROF_TOOLS_INFO_COMMAND_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace neuronprof {
namespace tools {

// Adds the `info` subcommand to `cli`. When a command line naming it has
// been parsed, `run` is set to what runs it and returns the exit status:
// 0 ok, 1 unreadable/corrupt/empty input. `run` must outlive the parse.
void AddInfoCommand(CLI::App& cli, std::function<int()>& run);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_INFO_COMMAND_H_
