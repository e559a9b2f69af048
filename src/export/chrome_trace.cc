#include "src/export/chrome_trace.h"

#include <fmt/compile.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "src/export/event_stats.h"
#include "src/export/gzip.h"
#include "src/export/ordered_jobs.h"
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

// What a plane's events are written with, shared by the writers of its
// jobs (read only while they run).
struct PlaneContext {
  PlaneContext(const PlaneVisitor& plane, int64_t pid) : visitor(plane), pid(pid),
      names(plane), keys(plane) {}
  const PlaneVisitor& visitor;
  const int64_t pid;
  const EventNames names;  // Escaped once per plane, not once per event.
  const StatNames keys;
  int64_t correlation_stat = -1;
  bool host_plane = false;
  // Serving events (neuronprof/trace_events.h) live on the host plane.
  bool serving = false;
  int64_t instant_stat = -1;
  int64_t async_id_stat = -1;
  absl::flat_hash_map<const tensorflow::profiler::XEvent*, std::vector<ContextFlowEnd>>
      flow_ends;
};

// Events [begin, end) of a line; `named`: the line's thread name first.
struct LineJob {
  int line = 0;
  int begin = 0;
  int end = 0;
  bool named = false;
};

class ChromeWriter {
 public:
  ChromeWriter(const XSpace& space, ByteSink* sink)
      : space_(space), out_(sink), linked_owned_(LinkedCorrelationIds(space)),
        linked_(&linked_owned_) {}
  // A job's writer: its text stays in `buffer` (json::Writer without a sink).
  ChromeWriter(const ChromeWriter& parent, fmt::memory_buffer&& buffer)
      : space_(parent.space_), out_(std::move(buffer)), linked_(parent.linked_),
        plane_(parent.plane_) {}

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

  fmt::memory_buffer TakeBuffer() { return out_.TakeBuffer(); }

 private:
  // Events per job: ~2 MB of text, a few jobs in flight at a time.
  static constexpr int kJobEvents = 8192;
  static constexpr size_t kJobsInFlight = 3;

  void WritePlane(const PlaneVisitor& visitor, int64_t pid) {
    WriteMetadataEvent(out_, "process_name", pid, nullptr, visitor.Name());
    PlaneContext plane(visitor, pid);
    plane.correlation_stat =
        linked_->empty() ? -1 : visitor.StatId(xplane::kCorrelationIdStat);
    plane.host_plane = xplane::IsHostPlane(visitor.raw());
    plane.serving = visitor.Name() == xplane::kHostPlaneName;
    plane.instant_stat = plane.serving ? visitor.StatId(xplane::kInstantStat) : -1;
    plane.async_id_stat = plane.serving ? visitor.StatId(xplane::kAsyncIdStat) : -1;
    if (plane.serving) FindContextFlows(visitor, &plane.flow_ends);
    plane_ = &plane;
    // Lines cut into jobs; a counter line is one job.
    std::vector<LineJob> jobs;
    for (int l = 0; l < visitor.NumLines(); ++l) {
      const LineVisitor line = visitor.Line(l);
      const int events = line.NumEvents();
      if (xplane::IsCounterLine(line.Name())) {
        jobs.push_back({l, 0, events, false});
        continue;
      }
      const bool async = plane.serving && xplane::IsAsyncLineId(line.Id());
      for (int at = 0; at == 0 || at < events; at += kJobEvents) {
        jobs.push_back({l, at, std::min(events, at + kJobEvents), at == 0 && !async});
      }
    }
    if (visitor.NumEvents() <= kJobEvents) {
      for (const LineJob& job : jobs) WriteJob(job);
    } else {
      const auto run = [&](size_t index, fmt::memory_buffer&& buffer) {
        auto writer = std::make_unique<ChromeWriter>(*this, std::move(buffer));
        writer->WriteJob(jobs[index]);
        return writer;
      };
      const auto take = [&](size_t, ChromeWriter& done) {
        unplaceable_ += done.unplaceable_;
        out_.Splice(done.out_.text());
      };
      RunJobsInOrder(jobs.size(), kJobsInFlight, run, take);
    }
    plane_ = nullptr;
  }

  void WriteJob(const LineJob& job) {
    const PlaneContext& plane = *plane_;
    const LineVisitor line = plane.visitor.Line(job.line);
    const int64_t tid = line.Id();
    const int64_t pid = plane.pid;
    if (xplane::IsCounterLine(line.Name())) {
      WriteCounterLine(line, pid);
      return;
    }
    const bool async = plane.serving && xplane::IsAsyncLineId(tid);
    if (job.named) WriteMetadataEvent(out_, "thread_name", pid, &tid, line.DisplayName());
    out_.MaybeFlush();
    // The same for every event of the line: formatted once.
    const std::string prefix = fmt::format(
        FMT_COMPILE("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":"), pid, tid);
    for (int e = job.begin; e < job.end; ++e) {
      const EventVisitor event = line.Event(e);
      const std::optional<xplane::EventTime> time = event.Time();
      if (!time) {
        ++unplaceable_;
        continue;
      }
      if (xplane::IsMemoryEventName(event.Name())) {
        WriteMemoryCounter(event, pid, time->start_ns);
      } else if (async) {
        WriteAsyncSpan(event, line.Name(), pid, line.DisplayId(), *time);
      } else if (plane.instant_stat >= 0 && event.IntStat(plane.instant_stat).has_value()) {
        WriteInstant(event, pid, tid, time->start_ns);
      } else {
        WriteEvent(event, prefix, *time);
      }
      if (!plane.flow_ends.empty()) {
        auto ends = plane.flow_ends.find(&event.raw());
        if (ends != plane.flow_ends.end()) {
          for (const ContextFlowEnd& end : ends->second) {
            WriteContextFlow(out_, end.start, end.id, end.cat, pid, tid, time->start_ns);
          }
        }
      }
      if (plane.correlation_stat >= 0) {
        const uint64_t id = CorrelationId(event, plane.correlation_stat);
        if (id != 0 && linked_->contains(id)) {
          WriteFlowEvent(out_, plane.host_plane, id, pid, tid, time->start_ns);
        }
      }
      out_.MaybeFlush();
    }
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
  void FindContextFlows(
      const PlaneVisitor& plane,
      absl::flat_hash_map<const tensorflow::profiler::XEvent*, std::vector<ContextFlowEnd>>*
          flow_ends) {
    for (const xplane::FlowLink& link : xplane::LinkFlows(plane)) {
      const uint64_t id = next_flow_id_++;
      std::string cat = xplane::ContextTypeName(link.context_type);
      (*flow_ends)[link.producer.event].push_back({id, true, cat});
      (*flow_ends)[link.consumer.event].push_back({id, false, std::move(cat)});
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
    const uint64_t id = static_cast<uint64_t>(event.IntStat(plane_->async_id_stat).value_or(0));
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
      if (begin) WriteArgs(event, plane_->async_id_stat);
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
    WriteArgs(event, plane_->instant_stat);
    out_.Raw("},\n");
  }

  void WriteName(const EventVisitor& event) { out_.Raw(plane_->names.Find(event.MetadataId())); }

  // ,"args":{...} of every stat but the one with id `skip`.
  void WriteArgs(const EventVisitor& event, int64_t skip) {
    JsonArgs args(&out_);
    event.ForEachStat([&](const xplane::StatVisitor& stat) {
      if (stat.Id() == skip) return;
      const StatNames::Entry* key = plane_->keys.Find(stat.Id());
      const bool fresh =
          key == nullptr ? args.Key("?") : args.EscapedKey(key->name, key->escaped);
      if (fresh) WriteStatValue(&out_, stat, plane_->keys);
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
  const absl::flat_hash_set<uint64_t> linked_owned_;  // The whole writer's.
  const absl::flat_hash_set<uint64_t>* linked_;
  const PlaneContext* plane_ = nullptr;  // The plane being written.
  int64_t unplaceable_ = 0;  // Events whose times do not fit int64 ns.
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
