// `neuronprof summary`: the operator table, time share and step breakdown of
// a capture, printed without Python.
#ifndef NEURONPROF_TOOLS_SUMMARY_COMMAND_H_
#define NEURONPROF_TOOLS_SUMMARY_COMMAND_H_

#include <functional>

#include "CLI/CLI.hpp"

namespace neuronprof {
namespace tools {

// Adds the `summary` subcommand and its options to `cli`. When a command
// line naming it has been parsed, `run` is set to what runs it and returns
// the exit status: 0 ok, 1 unreadable/corrupt/empty input (usage errors, 2,
// are the parser's). `run` must outlive the parse.
void AddSummaryCommand(CLI::App& cli, std::function<int()>& run);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_SUMMARY_COMMAND_H_
