#include "src/export/chrome_trace.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "src/export/event_stats.h"
#include "src/export/gzip.h"
#include "src/xplane/event_time.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace exporter {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using xplane::EventVisitor;
using xplane::LineVisitor;
using xplane::PlaneVisitor;

void WriteMetadataEvent(json::Writer& out, const char* kind, int64_t pid,
                        const int64_t* tid, std::string_view name) {
  out.Raw("{\"ph\":\"M\",\"name\":\"");
  out.Raw(kind);
  out.Raw("\",\"pid\":");
  out.Int(pid);
  if (tid != nullptr) {
    out.Raw(",\"tid\":");
    out.Int(*tid);
  }
  out.Raw(",\"args\":{\"name\":");
  out.String(name);
  out.Raw("}},\n");
}

uint64_t CorrelationId(const EventVisitor& event, int64_t stat_id) {
  return static_cast<uint64_t>(event.IntStat(stat_id).value_or(0));
}

// Correlation ids present on both a host event (a runtime call) and a device
// event: each becomes a flow arrow from the call to the device work.
absl::flat_hash_set<uint64_t> LinkedCorrelationIds(const XSpace& space) {
  absl::flat_hash_set<uint64_t> host, linked;
  for (int pass = 0; pass < 2; ++pass) {
    for (const XPlane& plane : space.planes()) {
      if (!(pass == 0 ? xplane::IsHostPlane(plane) : xplane::IsDevicePlane(plane))) continue;
      const PlaneVisitor visitor(plane);
      const int64_t stat_id = visitor.StatId(xplane::kCorrelationIdStat);
      if (stat_id < 0) continue;
      visitor.ForEachEvent([&](const EventVisitor& event) {
        const uint64_t id = CorrelationId(event, stat_id);
        if (id == 0) return;
        if (pass == 0) {
          host.insert(id);
        } else if (host.contains(id)) {
          linked.insert(id);
        }
      });
    }
  }
  return linked;
}

// A flow event ("s" on the call, "f" on the device event) bound to the
// slice that encloses `ts_ns` on that thread.
void WriteFlowEvent(json::Writer& out, bool start, uint64_t id, int64_t pid, int64_t tid,
                    int64_t ts_ns) {
  out.Raw(start ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"");
  out.Raw(",\"name\":\"launch\",\"cat\":\"device_launch\",\"id\":");
  out.Int(id);
  out.Raw(",\"pid\":");
  out.Int(pid);
  out.Raw(",\"tid\":");
  out.Int(tid);
  out.Raw(",\"ts\":");
  out.Micros(ts_ns);
  out.Raw("},\n");
}

class ChromeWriter {
 public:
  ChromeWriter(const XSpace& space, ByteSink* sink)
      : space_(space), out_(sink), linked_(LinkedCorrelationIds(space)) {}

  absl::Status Write() {
    // Times are microseconds from the profile start, printed exactly from
    // integer ns: epoch microseconds (~1.8e15) would lose sub-microsecond
    // precision in every JSON reader's doubles. The epoch start is kept in
    // baseTimeNanoseconds, as Kineto's traces do.
    out_.Raw("{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":");
    out_.Int(xplane::ProfileStartEpochNs(space_));
    out_.Raw(",\"traceEvents\":[\n");
    int64_t pid = 0;
    for (const XPlane& plane : space_.planes()) {
      ++pid;
      if (plane.lines_size() > 0) WritePlane(PlaneVisitor(plane), pid);
    }
    // A final metadata event keeps the list free of a trailing comma.
    out_.Raw("{\"ph\":\"M\",\"name\":\"neuronprof\",\"pid\":0,\"args\":{\"warnings\":[");
    for (int i = 0; i < space_.warnings_size(); ++i) {
      if (i) out_.Char(',');
      out_.String(space_.warnings(i));
    }
    if (unplaceable_ > 0) {
      if (space_.warnings_size() > 0) out_.Char(',');
      out_.String(xplane::UnplaceableEventsWarning(unplaceable_));
    }
    out_.Raw("]}}\n]}\n");
    return out_.Finish();
  }

 private:
  void WritePlane(const PlaneVisitor& plane, int64_t pid) {
    WriteMetadataEvent(out_, "process_name", pid, nullptr, plane.Name());
    // Names and keys are escaped once per plane, not once per event.
    names_.clear();
    for (const auto& [id, metadata] : plane.raw().event_metadata()) {
      names_.emplace(id, json::Escaped(metadata.display_name().empty()
                                           ? metadata.name()
                                           : metadata.display_name()));
    }
    keys_.clear();
    for (const auto& [id, metadata] : plane.raw().stat_metadata()) {
      keys_.emplace(id, json::Escaped(metadata.name()));
    }
    const int64_t correlation_stat =
        linked_.empty() ? -1 : plane.StatId(xplane::kCorrelationIdStat);
    const bool host_plane = xplane::IsHostPlane(plane.raw());
    plane.ForEachLine([&](const LineVisitor& line) {
      const int64_t tid = line.Id();
      WriteMetadataEvent(out_, "thread_name", pid, &tid, line.DisplayName());
      out_.MaybeFlush();
      // The same for every event of the line: formatted once.
      const std::string prefix = fmt::format(
          FMT_COMPILE("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":"), pid, tid);
      line.ForEachEvent([&](const EventVisitor& event) {
        const std::optional<xplane::EventTime> time = event.Time();
        if (!time) {
          ++unplaceable_;
          return;
        }
        if (xplane::IsMemoryEventName(event.Name())) {
          WriteMemoryCounter(event, pid, time->start_ns);
        } else {
          WriteEvent(event, prefix, *time);
        }
        if (correlation_stat >= 0) {
          const uint64_t id = CorrelationId(event, correlation_stat);
          if (id != 0 && linked_.contains(id)) {
            WriteFlowEvent(out_, host_plane, id, pid, tid, time->start_ns);
          }
        }
        out_.MaybeFlush();
      });
    });
  }

  // A memory event is a sample of its allocator's curve: a counter on the
  // process's "Memory <allocator>" track, which Perfetto and chrome://tracing
  // draw as a graph (tid plays no part in a counter's track).
  void WriteMemoryCounter(const EventVisitor& event, int64_t pid, int64_t ts_ns) {
    const std::string_view allocator =
        event.StrStatNamed(xplane::kAllocatorNameStat).value_or("unknown");
    out_.Raw("{\"ph\":\"C\",\"pid\":");
    out_.Int(pid);
    out_.Raw(",\"ts\":");
    out_.Micros(ts_ns);
    out_.Raw(",\"name\":");
    out_.String(fmt::format("Memory {}", allocator));
    JsonArgs args(&out_);
    args.Int("allocated", event.IntStatNamed(xplane::kBytesAllocatedStat).value_or(0));
    if (auto reserved = event.IntStatNamed(xplane::kPoolReservedStat)) {
      args.Int("reserved", *reserved);
    }
    args.Close();
    out_.Raw("},\n");
  }

  void WriteEvent(const EventVisitor& event, std::string_view prefix,
                  const xplane::EventTime& time) {
    out_.Raw(prefix);
    out_.Micros(time.start_ns);
    out_.Raw(",\"dur\":");
    out_.Micros(time.duration_ns);
    out_.Raw(",\"name\":");
    auto name = names_.find(event.MetadataId());
    out_.Raw(name == names_.end() ? std::string_view("\"\"") : name->second);
    JsonArgs args(&out_);
    event.ForEachStat([&](const xplane::StatVisitor& stat) {
      auto key = keys_.find(stat.Id());
      const bool fresh = key == keys_.end() ? args.Key("?")
                                            : args.EscapedKey(stat.Name(), key->second);
      if (fresh) WriteStatValue(&out_, stat);
    });
    args.Close();
    out_.Raw("},\n");
  }

  const XSpace& space_;
  json::Writer out_;
  const absl::flat_hash_set<uint64_t> linked_;
  absl::flat_hash_map<int64_t, std::string> names_;  // Escaped, of this plane.
  absl::flat_hash_map<int64_t, std::string> keys_;   // Escaped stat names.
  int64_t unplaceable_ = 0;  // Events whose times do not fit int64 ns.
};

}  // namespace

absl::Status WriteChromeTrace(const XSpace& space, ByteSink* sink) {
  return ChromeWriter(space, sink).Write();
}

absl::Status WriteChromeTraceFile(const XSpace& space, const std::string& path) {
  return WriteFileStreamed(path, [&](ByteSink* sink) { return WriteChromeTrace(space, sink); });
}

}  // namespace exporter
}  // namespace neuronprof
