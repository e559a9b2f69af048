#include "tools/cli_output.h"

#include <algorithm>
#include <cstdio>

#include "fmt/format.h"

namespace neuronprof {
namespace tools {

int Fail(absl::string_view message) {
  fmt::print(stderr, "neuronprof: {}\n", fmt::string_view(message.data(), message.size()));
  return kExitFailure;
}

std::string OneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace tools
}  // namespace neuronprof
