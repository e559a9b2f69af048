// What every `neuronprof` command prints the same way: failures on stderr
// and one-line renderings of multi-line messages.
#ifndef NEURONPROF_TOOLS_CLI_OUTPUT_H_
#define NEURONPROF_TOOLS_CLI_OUTPUT_H_

#include <string>

#include "absl/strings/string_view.h"

namespace neuronprof {
namespace tools {

// Exit statuses of every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // unreadable input, a failed capture
inline constexpr int kExitUsage = 2;    // bad arguments

// Prints "neuronprof: <message>" on stderr; returns kExitFailure. (Takes
// absl::Status::message() as it is.)
int Fail(absl::string_view message);

// `text` with its line breaks turned into spaces, so that each result stays
// on its own line of output.
std::string OneLine(std::string text);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_CLI_OUTPUT_H_
