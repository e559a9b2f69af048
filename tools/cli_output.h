// What every `neuronprof` command prints the same way: failures and usage
// errors on stderr and one-line renderings of multi-line messages.
#ifndef NEURONPROF_TOOLS_CLI_OUTPUT_H_
#define NEURONPROF_TOOLS_CLI_OUTPUT_H_

#include <string>
#include <string_view>
#include <utility>

#include "CLI/CLI.hpp"
#include "absl/strings/string_view.h"
#include "fmt/format.h"

namespace neuronprof {
namespace tools {

// Exit statuses of every command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // unreadable input, a failed capture
inline constexpr int kExitUsage = 2;    // bad arguments

// Prints "neuronprof: <message>" on stderr; returns kExitFailure. (Takes
// absl::Status::message() as it is; its control characters are escaped.)
int Fail(absl::string_view message);

// A usage error: prints "neuronprof: <message>" and where `command`'s usage
// is on stderr; returns kExitUsage.
int Usage(const CLI::App& command, absl::string_view message);

// The parser's `error` in `command`, made specific where CLI11's is vague.
std::string UsageMessage(const CLI::App& command, const CLI::ParseError& error);

// Prints `text` on stdout with every control character but the line break
// escaped (analysis/text/terminal_text.h): every human-readable output of a
// command goes through here, so no text from a file or a peer reaches the
// terminal raw. (CSV and JSON on stdout are data and keep their bytes.)
void Print(std::string_view text);
template <typename... Args>
void Print(fmt::format_string<Args...> format, Args&&... args) {
  Print(std::string_view(fmt::format(format, std::forward<Args>(args)...)));
}

// `text` with its line breaks turned into spaces, so that each result stays
// on its own line of output, and its other control characters escaped.
std::string OneLine(std::string text);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_CLI_OUTPUT_H_
