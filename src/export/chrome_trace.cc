#include "src/export/chrome_trace.h"

#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "src/export/event_stats.h"
#include "src/export/json_text.h"
#include "src/xplane/event_time.h"
#include "src/xplane/names.h"
#include "src/xplane/stat_lookup.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace exporter {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XStat;

using json::AppendEscaped;
using json::AppendInt;
using json::AppendMicros;

void AppendMetadataEvent(std::string* out, const char* kind, int64_t pid,
                         const int64_t* tid, std::string_view name) {
  out->append("{\"ph\":\"M\",\"name\":\"");
  out->append(kind);
  out->append("\",\"pid\":");
  AppendInt(out, pid);
  if (tid != nullptr) {
    out->append(",\"tid\":");
    AppendInt(out, *tid);
  }
  out->append(",\"args\":{\"name\":");
  AppendEscaped(out, name);
  out->append("}},\n");
}

uint64_t CorrelationId(const XPlane& plane, const tensorflow::profiler::XEvent& event,
                       int64_t stat_id) {
  return static_cast<uint64_t>(
      xplane::IntValue(xplane::FindStat(plane, event, stat_id)).value_or(0));
}

// Correlation ids present on both a host event (a runtime call) and a device
// event: each becomes a flow arrow from the call to the device work.
absl::flat_hash_set<uint64_t> LinkedCorrelationIds(
    const tensorflow::profiler::XSpace& space) {
  absl::flat_hash_set<uint64_t> host, linked;
  for (int pass = 0; pass < 2; ++pass) {
    const char* prefix = pass == 0 ? "/host:" : xplane::kDevicePlanePrefix;
    for (const XPlane& plane : space.planes()) {
      if (!absl::StartsWith(plane.name(), prefix)) continue;
      const int64_t stat_id = xplane::StatId(plane, xplane::kCorrelationIdStat);
      if (stat_id < 0) continue;
      for (const auto& line : plane.lines()) {
        for (const auto& event : line.events()) {
          const uint64_t id = CorrelationId(plane, event, stat_id);
          if (id == 0) continue;
          if (pass == 0) {
            host.insert(id);
          } else if (host.contains(id)) {
            linked.insert(id);
          }
        }
      }
    }
  }
  return linked;
}

// A flow event ("s" on the call, "f" on the device event) bound to the
// slice that encloses `ts_ns` on that thread.
void AppendFlowEvent(std::string* out, bool start, uint64_t id, int64_t pid,
                     int64_t tid, int64_t ts_ns) {
  out->append(start ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"");
  out->append(",\"name\":\"launch\",\"cat\":\"device_launch\",\"id\":");
  AppendInt(out, id);
  out->append(",\"pid\":");
  AppendInt(out, pid);
  out->append(",\"tid\":");
  AppendInt(out, tid);
  out->append(",\"ts\":");
  AppendMicros(out, ts_ns);
  out->append("},\n");
}

}  // namespace

std::string XSpaceToChromeTraceJson(const tensorflow::profiler::XSpace& space) {
  std::string out;
  size_t total_events = 0;
  for (const XPlane& plane : space.planes()) {
    for (const auto& line : plane.lines()) total_events += line.events_size();
  }
  out.reserve(total_events * 96 + 4096);
  // Times are microseconds from the profile start, printed exactly from
  // integer ns: epoch microseconds (~1.8e15) would lose sub-microsecond
  // precision in every JSON reader's doubles. The epoch start is kept in
  // baseTimeNanoseconds, as Kineto's traces do.
  out.append("{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":");
  AppendInt(&out, xplane::ProfileStartEpochNs(space));
  out.append(",\"traceEvents\":[\n");
  const absl::flat_hash_set<uint64_t> linked = LinkedCorrelationIds(space);
  int64_t pid = 0;
  int64_t unplaceable = 0;  // Events whose times do not fit int64 ns.
  for (const XPlane& plane : space.planes()) {
    ++pid;
    if (plane.lines_size() == 0) continue;
    AppendMetadataEvent(&out, "process_name", pid, nullptr, plane.name());
    // Event names are escaped once per plane, not once per event.
    absl::flat_hash_map<int64_t, std::string> names;
    for (const auto& [id, metadata] : plane.event_metadata()) {
      std::string escaped;
      AppendEscaped(&escaped, metadata.display_name().empty()
                                  ? metadata.name()
                                  : metadata.display_name());
      names.emplace(id, std::move(escaped));
    }
    const PlaneStatNames stat_names(plane);
    absl::flat_hash_map<int64_t, std::string> stat_keys;
    for (const auto& [id, metadata] : plane.stat_metadata()) {
      std::string escaped;
      AppendEscaped(&escaped, metadata.name());
      stat_keys.emplace(id, std::move(escaped));
    }
    const int64_t correlation_stat =
        linked.empty() ? -1 : xplane::StatId(plane, xplane::kCorrelationIdStat);
    const bool host_plane = absl::StartsWith(plane.name(), "/host:");
    for (const auto& line : plane.lines()) {
      const int64_t tid = line.id();
      AppendMetadataEvent(&out, "thread_name", pid, &tid,
                          line.display_name().empty() ? line.name()
                                                      : line.display_name());
      for (const auto& event : line.events()) {
        const std::optional<xplane::EventTime> time = xplane::CheckedEventTime(line, event);
        if (!time) {
          ++unplaceable;
          continue;
        }
        out.append("{\"ph\":\"X\",\"pid\":");
        AppendInt(&out, pid);
        out.append(",\"tid\":");
        AppendInt(&out, tid);
        out.append(",\"ts\":");
        AppendMicros(&out, time->start_ns);
        out.append(",\"dur\":");
        AppendMicros(&out, time->duration_ns);
        out.append(",\"name\":");
        auto name = names.find(event.metadata_id());
        out.append(name == names.end() ? "\"\"" : name->second);
        if (event.stats_size() > 0) {
          out.append(",\"args\":{");
          bool first = true;
          for (const XStat& stat : event.stats()) {
            if (!first) out.push_back(',');
            first = false;
            auto key = stat_keys.find(stat.metadata_id());
            out.append(key == stat_keys.end() ? "\"?\"" : key->second);
            out.push_back(':');
            AppendStatValue(&out, stat, stat_names);
          }
          out.push_back('}');
        }
        out.append("},\n");
        if (const uint64_t id = CorrelationId(plane, event, correlation_stat);
            id != 0 && linked.contains(id)) {
          AppendFlowEvent(&out, host_plane, id, pid, tid, time->start_ns);
        }
      }
    }
  }
  // A final instant event keeps the list free of a trailing comma.
  out.append("{\"ph\":\"M\",\"name\":\"neuronprof\",\"pid\":0,\"args\":{\"warnings\":[");
  for (int i = 0; i < space.warnings_size(); ++i) {
    if (i) out.push_back(',');
    AppendEscaped(&out, space.warnings(i));
  }
  if (unplaceable > 0) {
    if (space.warnings_size() > 0) out.push_back(',');
    AppendEscaped(&out, xplane::UnplaceableEventsWarning(unplaceable));
  }
  out.append("]}}\n]}\n");
  return out;
}

}  // namespace exporter
}  // namespace neuronprof
