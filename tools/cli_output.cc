#include "tools/cli_output.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "absl/strings/match.h"
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

// A usage error: one line naming the option, then where the usage is.
int Usage(const CLI::App& command, absl::string_view message) {
  std::string name = command.get_name();
  for (const CLI::App* parent = command.get_parent(); parent != nullptr;
       parent = parent->get_parent()) {
    name = parent->get_name() + " " + name;
  }
  fmt::print(stderr, "neuronprof: {}\nusage: {} --help lists the options\n",
             fmt::string_view(message.data(), message.size()), name);
  return kExitUsage;
}

// The parser's message, made specific where CLI11's is vague: an argument
// it did not expect is named first (CLI11 reports missing options before
// it), a missing input says what to give.
std::string UsageMessage(const CLI::App& command, const CLI::ParseError& error) {
  const std::vector<std::string> unexpected = command.remaining();
  if (!unexpected.empty()) {
    const std::string& first = unexpected.front();
    if (absl::StartsWith(first, "-")) {
      return fmt::format("unknown option '{}'", first.substr(0, first.find('=')));
    }
    if (command.get_parent() == nullptr) return fmt::format("unknown command '{}'", first);
    return fmt::format("unexpected argument '{}'", first);
  }
  if (error.get_name() == "ArgumentMismatch") {
    // "--name: 1 required TYPE missing": an option given last, without its value.
    const std::string what = error.what();
    const CLI::Option* option = command.get_option_no_throw(what.substr(0, what.find(':')));
    if (option != nullptr && option->count() == 0) {
      return fmt::format("{} needs a value", option->get_name(false, true));
    }
  }
  if (error.get_name() == "RequiredError") {
    for (const CLI::Option* input : command.get_options([](const CLI::Option* option) {
           return option->get_positional() && option->count() == 0;
         })) {
      return fmt::format("{} needs {}", command.get_name(), input->get_description());
    }
  }
  return error.what();
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
