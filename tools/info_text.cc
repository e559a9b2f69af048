#include "tools/info_text.h"

#include <cstdint>
#include <iterator>

#include "fmt/format.h"
#include "src/analysis/text/terminal_text.h"
#include "src/xplane/job_identity.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace tools {
namespace {

// Each name on one line, its control characters escaped.
std::string Safe(std::string_view text) { return analysis::TerminalText(text); }

}  // namespace

std::string FormatInfo(const tensorflow::profiler::XSpace& space) {
  fmt::memory_buffer out;
  auto to = std::back_inserter(out);
  for (const auto& host : space.hostnames()) fmt::format_to(to, "host: {}\n", Safe(host));
  // Which rank of a distributed job wrote it (nothing for a single process).
  const xplane::JobIdentity job = xplane::ReadJobIdentity(space);
  if (job.distributed()) {
    fmt::format_to(to, "rank: {} of world size {} (local rank {}{}{})\n", job.rank, job.world_size,
                   job.local_rank, job.backend.empty() ? "" : ", backend ", Safe(job.backend));
  }
  for (const auto& raw : space.planes()) {
    const xplane::PlaneVisitor plane(raw);
    fmt::format_to(to, "plane {}: {} lines, {} events\n", Safe(plane.Name()), plane.NumLines(),
                   plane.NumEvents());
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      fmt::format_to(to, "  line {} {}: {} events\n", line.Id(), Safe(line.Name()),
                     line.NumEvents());
    });
  }
  for (const auto& warning : space.warnings()) fmt::format_to(to, "warning: {}\n", Safe(warning));
  for (const auto& error : space.errors()) fmt::format_to(to, "error: {}\n", Safe(error));
  return fmt::to_string(out);
}

}  // namespace tools
}  // namespace neuronprof
