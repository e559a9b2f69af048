// `neuronprof summary`: the operator table, time share and step breakdown of
// a capture, printed without Python.
#ifndef NEURONPROF_TOOLS_SUMMARY_COMMAND_H_
#define NEURONPROF_TOOLS_SUMMARY_COMMAND_H_

#include <string>
#include <vector>

namespace neuronprof {
namespace tools {

// The command's lines of `neuronprof help` (a macro, so that the CLI's usage
// literal can include it).
#define NEURONPROF_SUMMARY_USAGE                                                         \
  "  summary <LOGDIR | RUN_DIR | FILE.xplane.pb> [--top N] [--csv PATH|-] [--host NAME]\n" \
  "                                   operator table (PyProf columns), time share per\n"   \
  "                                   op and step-time breakdown; a logdir picks its\n"    \
  "                                   newest run, --host picks a host of a run; --csv\n"   \
  "                                   writes the op table as CSV ('-': stdout only);\n"    \
  "                                   --top N rows (default 20, 0: all). Exit 1: bad\n"    \
  "                                   input, 2: usage error\n"

// Returns the exit status: 0 ok, 1 unreadable/corrupt/empty input, 2 usage.
int SummaryCommand(const std::vector<std::string>& args);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_SUMMARY_COMMAND_H_
