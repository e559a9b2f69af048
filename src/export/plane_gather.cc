#include "src/export/plane_gather.h"

#include "src/xplane/saturating.h"

namespace neuronprof {
namespace exporter {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;

void PlaneGather::Append(const XPlane& fragment, absl::FunctionRef<bool(const XEvent&)> keep) {
  if (!started_) {
    started_ = true;
    plane_.set_id(fragment.id());
    plane_.set_name(fragment.name());
    *plane_.mutable_event_metadata() = fragment.event_metadata();
    *plane_.mutable_stat_metadata() = fragment.stat_metadata();
    *plane_.mutable_stats() = fragment.stats();
  }
  for (const XLine& line : fragment.lines()) {
    auto [at, fresh] = lines_.try_emplace(LineKey{line.id(), line.name()}, plane_.lines_size());
    if (fresh) {
      XLine* whole = plane_.add_lines();
      whole->set_id(line.id());
      whole->set_display_id(line.display_id());
      whole->set_name(line.name());
      whole->set_display_name(line.display_name());
      whole->set_timestamp_ns(line.timestamp_ns());
      whole->set_duration_ps(line.duration_ps());
    }
    XLine& whole = *plane_.mutable_lines(at->second);
    // Offsets are from the fragment's line timestamp.
    const int64_t shift_ps =
        SaturatingMul(SaturatingSub(line.timestamp_ns(), whole.timestamp_ns()), 1000);
    for (const XEvent& event : line.events()) {
      if (!keep(event)) continue;
      XEvent* copy = whole.add_events();
      *copy = event;
      if (shift_ps != 0) copy->set_offset_ps(SaturatingAdd(event.offset_ps(), shift_ps));
      ++events_;
    }
  }
}

}  // namespace exporter
}  // namespace neuronprof
