#include "tools/info_command.h"

#include <cstdint>
#include <iterator>

#include "fmt/format.h"

namespace neuronprof {
namespace tools {

std::string FormatInfo(const tensorflow::profiler::XSpace& space) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  for (const auto& host : space.hostnames()) fmt::format_to(to, "host: {}\n", host);
  for (const auto& plane : space.planes()) {
    int64_t events = 0;
    for (const auto& line : plane.lines()) events += line.events_size();
    fmt::format_to(to, "plane {}: {} lines, {} events\n", plane.name(), plane.lines_size(),
                   events);
    for (const auto& line : plane.lines()) {
      fmt::format_to(to, "  line {} {}: {} events\n", line.id(), line.name(), line.events_size());
    }
  }
  for (const auto& warning : space.warnings()) fmt::format_to(to, "warning: {}\n", warning);
  for (const auto& error : space.errors()) fmt::format_to(to, "error: {}\n", error);
  return fmt::to_string(out);
}

}  // namespace tools
}  // namespace neuronprof
