// `neuronprof capture`: a remote capture of every listed
// tensorflow.ProfilerService server at once (neuronprof::Capture), with
// progress on stderr and one result line per host.
#ifndef NEURONPROF_TOOLS_CAPTURE_COMMAND_H_
#define NEURONPROF_TOOLS_CAPTURE_COMMAND_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace neuronprof {
namespace tools {

// Adds the `capture` subcommand and its options to `cli`. When a command
// line naming it has been parsed, `run` is set to what runs it and returns
// the exit status: 0 all hosts captured, 1 some failed, 2 options the
// parser cannot check (ValidateCaptureOptions). `run` must outlive the
// parse.
void AddCaptureCommand(CLI::App& cli, std::function<int()>& run);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_CAPTURE_COMMAND_H_
