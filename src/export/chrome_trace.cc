#include "src/export/chrome_trace.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "src/export/event_stats.h"
#include "src/export/gzip.h"
#include "src/xplane/event_time.h"
#include "src/xplane/flow_links.h"
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

// One end of a flow ("s" at its start, "f" bound to the enclosing slice at
// its end) named `name` in category `cat`, on thread (pid, tid) at `ts_ns`.
void WriteFlow(json::Writer& out, bool start, std::string_view name, std::string_view cat,
               uint64_t id, int64_t pid, int64_t tid, int64_t ts_ns) {
  out.Raw(start ? "{\"ph\":\"s\"" : "{\"ph\":\"f\",\"bp\":\"e\"");
  out.Raw(",\"name\":");
  out.String(name);
  out.Raw(",\"cat\":");
  out.String(cat);
  out.Raw(",\"id\":");
  out.Int(id);
  out.Raw(",\"pid\":");
  out.Int(pid);
  out.Raw(",\"tid\":");
  out.Int(tid);
  out.Raw(",\"ts\":");
  out.Micros(ts_ns);
  out.Raw("},\n");
}

// A launch -> device event flow ("s" on the call, "f" on the device event).
void WriteFlowEvent(json::Writer& out, bool start, uint64_t id, int64_t pid, int64_t tid,
                    int64_t ts_ns) {
  WriteFlow(out, start, "launch", "device_launch", id, pid, tid, ts_ns);
}

// A producer -> consumer flow ("s" on the producer, "f" on the consumer),
// one id per linked pair, "cat" = the context type's name.
void WriteContextFlow(json::Writer& out, bool start, uint64_t id, std::string_view cat,
                      int64_t pid, int64_t tid, int64_t ts_ns) {
  WriteFlow(out, start, "flow", cat, id, pid, tid, ts_ns);
}

// One end of a producer -> consumer flow on an event.
struct ContextFlowEnd {
  uint64_t id;
  bool start;  // The producer's end.
  std::string cat;
};

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
    // Serving events (neuronprof/trace_events.h) live on the host plane.
    const bool serving = plane.Name() == xplane::kHostPlaneName;
    instant_stat_ = serving ? plane.StatId(xplane::kInstantStat) : -1;
    async_id_stat_ = serving ? plane.StatId(xplane::kAsyncIdStat) : -1;
    flow_ends_.clear();
    if (serving) FindContextFlows(plane);
    plane.ForEachLine([&](const LineVisitor& line) {
      const int64_t tid = line.Id();
      if (xplane::IsCounterLine(line.Name())) {
        WriteCounterLine(line, pid);
        return;
      }
      const bool async = serving && xplane::IsAsyncLineId(tid);
      if (!async) WriteMetadataEvent(out_, "thread_name", pid, &tid, line.DisplayName());
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
        } else if (async) {
          WriteAsyncSpan(event, line.Name(), pid, line.DisplayId(), *time);
        } else if (instant_stat_ >= 0 && event.IntStat(instant_stat_).has_value()) {
          WriteInstant(event, pid, tid, time->start_ns);
        } else {
          WriteEvent(event, prefix, *time);
        }
        if (!flow_ends_.empty()) {
          auto ends = flow_ends_.find(&event.raw());
          if (ends != flow_ends_.end()) {
            for (const ContextFlowEnd& end : ends->second) {
              WriteContextFlow(out_, end.start, end.id, end.cat, pid, tid, time->start_ns);
            }
          }
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

  // Flow ends by event: every linked (producer, consumer) pair gets an id.
  void FindContextFlows(const PlaneVisitor& plane) {
    for (const xplane::FlowLink& link : xplane::LinkFlows(plane)) {
      const uint64_t id = next_flow_id_++;
      std::string cat = xplane::ContextTypeName(link.context_type);
      flow_ends_[link.producer.event].push_back({id, true, cat});
      flow_ends_[link.consumer.event].push_back({id, false, std::move(cat)});
    }
  }

  // The counter line: one "C" sample per event, a track per counter name.
  void WriteCounterLine(const LineVisitor& line, int64_t pid) {
    line.ForEachEvent([&](const EventVisitor& event) {
      const std::optional<xplane::EventTime> time = event.Time();
      const auto value = event.StatNamed(xplane::kCounterValueStat);
      if (!time) {
        ++unplaceable_;
        return;
      }
      if (!value) return;
      out_.Raw("{\"ph\":\"C\",\"pid\":");
      out_.Int(pid);
      out_.Raw(",\"ts\":");
      out_.Micros(time->start_ns);
      out_.Raw(",\"name\":");
      WriteName(event);
      out_.Raw(",\"args\":{\"value\":");
      WriteStatValue(&out_, *value);
      out_.Raw("}},\n");
      out_.MaybeFlush();
    });
  }

  // An async span: "b" and "e" with the track as category and the span's
  // id (a string: ids past 2^53 would lose bits in a JSON reader's double).
  void WriteAsyncSpan(const EventVisitor& event, std::string_view track, int64_t pid,
                      int64_t tid, const xplane::EventTime& time) {
    const uint64_t id = static_cast<uint64_t>(event.IntStat(async_id_stat_).value_or(0));
    const std::string id_text = fmt::format("\"0x{:x}\"", id);
    for (const bool begin : {true, false}) {
      out_.Raw(begin ? "{\"ph\":\"b\",\"cat\":" : "{\"ph\":\"e\",\"cat\":");
      out_.String(track);
      out_.Raw(",\"id\":");
      out_.Raw(id_text);
      out_.Raw(",\"pid\":");
      out_.Int(pid);
      out_.Raw(",\"tid\":");
      out_.Int(tid);
      out_.Raw(",\"ts\":");
      out_.Micros(begin ? time.start_ns : time.end_ns());
      out_.Raw(",\"name\":");
      WriteName(event);
      if (begin) WriteArgs(event, async_id_stat_);
      out_.Raw("},\n");
    }
  }

  // An instant on its thread ("s":"t"), its arguments without the marker.
  void WriteInstant(const EventVisitor& event, int64_t pid, int64_t tid, int64_t ts_ns) {
    out_.Raw("{\"ph\":\"i\",\"s\":\"t\",\"pid\":");
    out_.Int(pid);
    out_.Raw(",\"tid\":");
    out_.Int(tid);
    out_.Raw(",\"ts\":");
    out_.Micros(ts_ns);
    out_.Raw(",\"name\":");
    WriteName(event);
    WriteArgs(event, instant_stat_);
    out_.Raw("},\n");
  }

  void WriteName(const EventVisitor& event) {
    auto name = names_.find(event.MetadataId());
    out_.Raw(name == names_.end() ? std::string_view("\"\"") : name->second);
  }

  // ,"args":{...} of every stat but the one with id `skip`.
  void WriteArgs(const EventVisitor& event, int64_t skip) {
    JsonArgs args(&out_);
    event.ForEachStat([&](const xplane::StatVisitor& stat) {
      if (stat.Id() == skip) return;
      auto key = keys_.find(stat.Id());
      const bool fresh = key == keys_.end() ? args.Key("?")
                                            : args.EscapedKey(stat.Name(), key->second);
      if (fresh) WriteStatValue(&out_, stat);
    });
    args.Close();
  }

  void WriteEvent(const EventVisitor& event, std::string_view prefix,
                  const xplane::EventTime& time) {
    out_.Raw(prefix);
    out_.Micros(time.start_ns);
    out_.Raw(",\"dur\":");
    out_.Micros(time.duration_ns);
    out_.Raw(",\"name\":");
    WriteName(event);
    WriteArgs(event, /*skip=*/-1);
    out_.Raw("},\n");
  }

  const XSpace& space_;
  json::Writer out_;
  const absl::flat_hash_set<uint64_t> linked_;
  absl::flat_hash_map<int64_t, std::string> names_;  // Escaped, of this plane.
  absl::flat_hash_map<int64_t, std::string> keys_;   // Escaped stat names.
  int64_t unplaceable_ = 0;  // Events whose times do not fit int64 ns.
  // Serving events of the plane being written.
  int64_t instant_stat_ = -1;
  int64_t async_id_stat_ = -1;
  absl::flat_hash_map<const tensorflow::profiler::XEvent*, std::vector<ContextFlowEnd>>
      flow_ends_;
  uint64_t next_flow_id_ = 1;
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
