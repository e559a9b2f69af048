#include "src/analysis/memory_annotator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "src/xplane/saturating.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

struct Located {
  int64_t time_ps;
  int line, event;
};

// "cuda:1" -> ("CUDA", 1); "cpu" -> ("CPU", 0). false for other forms
// (a device plug-in's "NPU:0/HBM" carries its own device stats).
bool SplitAllocatorName(std::string_view name, std::string* type, int64_t* index) {
  if (name.find('/') != std::string_view::npos) return false;
  const size_t colon = name.find(':');
  *index = 0;
  if (colon != std::string_view::npos &&
      !absl::SimpleAtoi(absl::string_view(name.data() + colon + 1, name.size() - colon - 1),
                        index)) {
    return false;
  }
  *type = absl::AsciiStrToUpper(absl::string_view(name.data(), std::min(colon, name.size())));
  return !type->empty();
}

void AnnotatePlane(tensorflow::profiler::XPlane* raw) {
  const xplane::PlaneVisitor plane(*raw);
  const int64_t allocator_id = plane.StatId(xplane::kAllocatorNameStat);
  if (allocator_id < 0) return;  // No memory events here.
  const int64_t requested_id = plane.StatId(xplane::kRequestedBytesStat);
  const int64_t allocated_id = plane.StatId(xplane::kBytesAllocatedStat);
  const int64_t reserved_id = plane.StatId(xplane::kPoolReservedStat);
  std::vector<Located> events;
  for (int l = 0; l < plane.NumLines(); ++l) {
    const xplane::LineVisitor line = plane.Line(l);
    const int64_t line_ps = LineStartPs(line.TimestampNs());
    for (int e = 0; e < line.NumEvents(); ++e) {
      const xplane::EventVisitor event = line.Event(e);
      if (!xplane::IsMemoryEventName(event.Name())) continue;
      events.push_back({SaturatingAdd(line_ps, event.OffsetPs()), l, e});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Located& a, const Located& b) { return a.time_ps < b.time_ps; });
  // Stats to add, decided from the visitor, then added with the builder
  // (which may grow the plane's metadata the visitor indexed).
  struct Addition {
    Located at;
    std::optional<int64_t> allocation_bytes, device_id, available, peak;
    std::string device_type;
  };
  std::vector<Addition> additions;
  additions.reserve(events.size());
  std::map<std::string, int64_t, std::less<>> peaks;
  for (const Located& at : events) {
    const xplane::EventVisitor event = plane.Line(at.line).Event(at.event);
    Addition add{at, {}, {}, {}, {}, {}};
    const std::string_view allocator = event.StrStat(allocator_id).value_or("");
    const std::optional<int64_t> allocated = event.IntStat(allocated_id);
    if (!event.StatNamed(xplane::kAllocationBytesStat)) {
      add.allocation_bytes = event.IntStat(requested_id);
    }
    int64_t index = 0;
    if (!event.StatNamed(xplane::kMemoryDeviceTypeStat) &&
        SplitAllocatorName(allocator, &add.device_type, &index)) {
      add.device_id = index;
    }
    const std::optional<int64_t> reserved = event.IntStat(reserved_id);
    if (reserved && allocated && *reserved >= *allocated && *allocated >= 0 &&
        !event.StatNamed(xplane::kBytesAvailableStat)) {
      add.available = *reserved - *allocated;
    }
    if (allocated) {
      auto [it, inserted] = peaks.try_emplace(std::string(allocator), *allocated);
      if (!inserted) it->second = std::max(it->second, *allocated);
      if (!event.StatNamed(xplane::kPeakBytesInUseStat)) add.peak = it->second;
    }
    additions.push_back(std::move(add));
  }
  xplane::XPlaneBuilder builder(raw);
  for (const Addition& add : additions) {
    auto* event = raw->mutable_lines(add.at.line)->mutable_events(add.at.event);
    if (add.allocation_bytes) builder.AddStat(event, xplane::kAllocationBytesStat, *add.allocation_bytes);
    if (add.device_id) {
      builder.AddRefStat(event, xplane::kMemoryDeviceTypeStat, add.device_type);
      builder.AddStat(event, xplane::kDeviceIdStat, *add.device_id);
    }
    if (add.available) builder.AddStat(event, xplane::kBytesAvailableStat, *add.available);
    if (add.peak) builder.AddStat(event, xplane::kPeakBytesInUseStat, *add.peak);
  }
}

}  // namespace

void AnnotateMemoryEvents(tensorflow::profiler::XSpace* space) {
  for (tensorflow::profiler::XPlane& plane : *space->mutable_planes()) {
    if (xplane::IsHostPlane(plane)) AnnotatePlane(&plane);
  }
}

}  // namespace analysis
}  // namespace neuronprof
