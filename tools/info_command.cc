#include "tools/info_command.h"

#include <cstdint>

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace tools {

std::string FormatInfo(const tensorflow::profiler::XSpace& space) {
  std::string out;
  for (const auto& host : space.hostnames()) absl::StrAppend(&out, "host: ", host, "\n");
  for (const auto& plane : space.planes()) {
    int64_t events = 0;
    for (const auto& line : plane.lines()) events += line.events_size();
    absl::StrAppend(&out, "plane ", plane.name(), ": ", plane.lines_size(), " lines, ", events,
                    " events\n");
    for (const auto& line : plane.lines()) {
      absl::StrAppend(&out, "  line ", line.id(), " ", line.name(), ": ", line.events_size(),
                      " events\n");
    }
  }
  for (const auto& warning : space.warnings()) absl::StrAppend(&out, "warning: ", warning, "\n");
  for (const auto& error : space.errors()) absl::StrAppend(&out, "error: ", error, "\n");
  return out;
}

}  // namespace tools
}  // namespace neuronprof
