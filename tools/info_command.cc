#include "tools/info_command.h"

#include <cstdint>
#include <iterator>

#include "fmt/format.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace tools {

std::string FormatInfo(const tensorflow::profiler::XSpace& space) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  for (const auto& host : space.hostnames()) fmt::format_to(to, "host: {}\n", host);
  for (const auto& raw : space.planes()) {
    const xplane::PlaneVisitor plane(raw);
    fmt::format_to(to, "plane {}: {} lines, {} events\n", plane.Name(), plane.NumLines(),
                   plane.NumEvents());
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      fmt::format_to(to, "  line {} {}: {} events\n", line.Id(), line.Name(), line.NumEvents());
    });
  }
  for (const auto& warning : space.warnings()) fmt::format_to(to, "warning: {}\n", warning);
  for (const auto& error : space.errors()) fmt::format_to(to, "error: {}\n", error);
  return fmt::to_string(out);
}

}  // namespace tools
}  // namespace neuronprof
