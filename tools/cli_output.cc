#include "tools/cli_output.h"

#include <algorithm>
#include <cstdio>

#include "fmt/format.h"
#include "src/analysis/text/terminal_text.h"

namespace neuronprof {
namespace tools {

int Fail(absl::string_view message) {
  fmt::print(stderr, "neuronprof: {}\n",
             analysis::TerminalText(std::string_view(message.data(), message.size()),
                                    analysis::LineBreaks::kKeep));
  return kExitFailure;
}

void Print(std::string_view text) {
  fmt::print("{}", analysis::TerminalText(text, analysis::LineBreaks::kKeep));
}

std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return analysis::TerminalText(text);
}

}  // namespace tools
}  // namespace neuronprof
