// `neuronprof convert`: a capture's Chrome/Perfetto trace, or the PyTorch
// profiler's Kineto trace, per host of a run.
#ifndef NEURONPROF_TOOLS_CONVERT_COMMAND_H_
#define NEURONPROF_TOOLS_CONVERT_COMMAND_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace neuronprof {
namespace tools {

// Adds the `convert` subcommand and its options to `cli`. When a command
// line naming it has been parsed, `run` is set to what runs it and returns
// the exit status: 0 ok, 1 bad input or a failed write. `run` must outlive
// the parse.
void AddConvertCommand(CLI::App& cli, std::function<int()>& run);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_CONVERT_COMMAND_H_
