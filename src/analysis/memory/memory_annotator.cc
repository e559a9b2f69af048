#include "src/analysis/memory/memory_annotator.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
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

// The index of `type` in `types`, added there if new.
int TypeIndex(const std::string& type, std::vector<std::string>* types) {
  const auto it = std::find(types->begin(), types->end(), type);
  if (it != types->end()) return static_cast<int>(it - types->begin());
  types->push_back(type);
  return static_cast<int>(types->size()) - 1;
}

// The metadata ids of the stats `additions` add, each made on its first
// use in `additions`' order (so in the same order as one look-up per stat
// would make them).
MemoryAnnotationIds ResolveIds(const std::vector<MemoryStatsToAdd>& additions,
                               const std::vector<std::string>& device_types,
                               tensorflow::profiler::XPlane* raw) {
  xplane::XPlaneBuilder builder(raw);
  MemoryAnnotationIds ids;
  ids.device_type_refs.assign(device_types.size(), -1);
  const auto id = [&builder](int64_t* cached, std::string_view name) {
    if (*cached < 0) *cached = builder.StatMetadataId(name);
  };
  for (const MemoryStatsToAdd& a : additions) {
    if (a.has & MemoryStatsToAdd::kAllocationBytes) {
      id(&ids.allocation_bytes, xplane::kAllocationBytesStat);
    }
    if (a.device_type >= 0) {
      id(&ids.device_type, xplane::kMemoryDeviceTypeStat);
      id(&ids.device_type_refs[a.device_type], device_types[a.device_type]);
      id(&ids.device_id, xplane::kDeviceIdStat);
    }
    if (a.has & MemoryStatsToAdd::kAvailable) id(&ids.available, xplane::kBytesAvailableStat);
    if (a.has & MemoryStatsToAdd::kPeak) id(&ids.peak, xplane::kPeakBytesInUseStat);
  }
  return ids;
}

// Adds the stats with ids made before: no metadata changes.
void AddStats(const std::vector<MemoryStatsToAdd>& additions, int part, int parts,
              const MemoryAnnotationIds& ids, tensorflow::profiler::XPlane* raw) {
  const auto add = [](tensorflow::profiler::XEvent* event, int64_t metadata_id) {
    tensorflow::profiler::XStat* stat = event->add_stats();
    stat->set_metadata_id(metadata_id);
    return stat;
  };
  const size_t count = additions.size();
  for (size_t i = count * part / parts; i < count * (part + 1) / parts; ++i) {
    const MemoryStatsToAdd& a = additions[i];
    auto* event = raw->mutable_lines(a.line)->mutable_events(a.event);
    if (a.has & MemoryStatsToAdd::kAllocationBytes) {
      add(event, ids.allocation_bytes)->set_int64_value(a.allocation_bytes);
    }
    if (a.device_type >= 0) {
      add(event, ids.device_type)
          ->set_ref_value(static_cast<uint64_t>(ids.device_type_refs[a.device_type]));
      add(event, ids.device_id)->set_int64_value(a.device_id);
    }
    if (a.has & MemoryStatsToAdd::kAvailable) {
      add(event, ids.available)->set_int64_value(a.available);
    }
    if (a.has & MemoryStatsToAdd::kPeak) add(event, ids.peak)->set_int64_value(a.peak);
  }
}

// The stats to add to one plane's memory events; empty when it has none.
// Device type names go into `device_types`, once each.
std::vector<MemoryStatsToAdd> PlanPlane(const tensorflow::profiler::XPlane& raw,
                                        std::vector<std::string>* device_types) {
  const xplane::PlaneVisitor plane(raw);
  const int64_t allocator_id = plane.StatId(xplane::kAllocatorNameStat);
  if (allocator_id < 0) return {};  // No memory events here.
  const int64_t requested_id = plane.StatId(xplane::kRequestedBytesStat);
  const int64_t allocated_id = plane.StatId(xplane::kBytesAllocatedStat);
  const int64_t reserved_id = plane.StatId(xplane::kPoolReservedStat);
  // Stats an event may carry already (then left as they are).
  const int64_t allocation_bytes_id = plane.StatId(xplane::kAllocationBytesStat);
  const int64_t device_type_id = plane.StatId(xplane::kMemoryDeviceTypeStat);
  const int64_t available_id = plane.StatId(xplane::kBytesAvailableStat);
  const int64_t peak_id = plane.StatId(xplane::kPeakBytesInUseStat);
  // Memory events told by their metadata id: no metadata look-up for
  // each of the other events.
  absl::flat_hash_set<int64_t> memory_metadata;
  for (const auto& [id, metadata] : raw.event_metadata()) {
    if (xplane::IsMemoryEventName(metadata.name())) memory_metadata.insert(id);
  }
  std::vector<Located> events;
  for (int l = 0; l < plane.NumLines(); ++l) {
    const tensorflow::profiler::XLine& line = raw.lines(l);
    const int64_t line_ps = LineStartPs(line.timestamp_ns());
    for (int e = 0; e < line.events_size(); ++e) {
      const tensorflow::profiler::XEvent& event = line.events(e);
      if (!memory_metadata.contains(event.metadata_id())) continue;
      events.push_back({SaturatingAdd(line_ps, event.offset_ps()), l, e});
    }
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const Located& a, const Located& b) { return a.time_ps < b.time_ps; });
  std::vector<MemoryStatsToAdd> additions;
  additions.reserve(events.size());
  std::map<std::string, int64_t, std::less<>> peaks;
  // Events of one allocator come in runs: its name is split once per run.
  std::string_view split_allocator;
  std::string split_type;
  int split_type_index = -1;
  int64_t split_index = 0;
  bool split_ok = false;
  for (const Located& at : events) {
    const xplane::EventVisitor event = plane.Line(at.line).Event(at.event);
    MemoryStatsToAdd add;
    add.line = at.line;
    add.event = at.event;
    const std::string_view allocator = event.StrStat(allocator_id).value_or("");
    const std::optional<int64_t> allocated = event.IntStat(allocated_id);
    if (!event.Stat(allocation_bytes_id)) {
      if (const auto requested = event.IntStat(requested_id)) {
        add.has |= MemoryStatsToAdd::kAllocationBytes;
        add.allocation_bytes = *requested;
      }
    }
    if (!event.Stat(device_type_id)) {
      if (split_allocator.data() == nullptr || allocator != split_allocator) {
        split_allocator = allocator;
        split_ok = SplitAllocatorName(allocator, &split_type, &split_index);
        if (split_ok) split_type_index = TypeIndex(split_type, device_types);
      }
      if (split_ok) {
        add.device_type = split_type_index;
        add.device_id = split_index;
      }
    }
    const std::optional<int64_t> reserved = event.IntStat(reserved_id);
    if (reserved && allocated && *reserved >= *allocated && *allocated >= 0 &&
        !event.Stat(available_id)) {
      add.has |= MemoryStatsToAdd::kAvailable;
      add.available = *reserved - *allocated;
    }
    if (allocated) {
      auto it = peaks.find(allocator);
      if (it == peaks.end()) {
        it = peaks.emplace(std::string(allocator), *allocated).first;
      } else {
        it->second = std::max(it->second, *allocated);
      }
      if (!event.Stat(peak_id)) {
        add.has |= MemoryStatsToAdd::kPeak;
        add.peak = it->second;
      }
    }
    additions.push_back(std::move(add));
  }
  return additions;
}

}  // namespace

MemoryAnnotation PlanMemoryAnnotation(const tensorflow::profiler::XSpace& space) {
  MemoryAnnotation annotation;
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsHostPlane(space.planes(p))) continue;
    std::vector<MemoryStatsToAdd> additions = PlanPlane(space.planes(p), &annotation.device_types);
    if (!additions.empty()) annotation.planes.emplace_back(p, std::move(additions));
  }
  return annotation;
}

void AddMemoryAnnotation(const MemoryAnnotation& annotation, tensorflow::profiler::XSpace* space) {
  AddMemoryStats(annotation, ResolveMemoryStatIds(annotation, space), 0, 1, space);
}

std::vector<MemoryAnnotationIds> ResolveMemoryStatIds(const MemoryAnnotation& annotation,
                                                      tensorflow::profiler::XSpace* space) {
  std::vector<MemoryAnnotationIds> ids;
  ids.reserve(annotation.planes.size());
  for (const auto& [plane, additions] : annotation.planes) {
    ids.push_back(ResolveIds(additions, annotation.device_types, space->mutable_planes(plane)));
  }
  return ids;
}

void AddMemoryStats(const MemoryAnnotation& annotation, const std::vector<MemoryAnnotationIds>& ids,
                    int part, int parts, tensorflow::profiler::XSpace* space) {
  for (size_t i = 0; i < annotation.planes.size(); ++i) {
    const auto& [plane, additions] = annotation.planes[i];
    AddStats(additions, part, parts, ids[i], space->mutable_planes(plane));
  }
}

void AnnotateMemoryEvents(tensorflow::profiler::XSpace* space) {
  AddMemoryAnnotation(PlanMemoryAnnotation(*space), space);
}

}  // namespace analysis
}  // namespace neuronprof
