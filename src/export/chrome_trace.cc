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
#include "src/export/plane_gather.h"
#include "src/xplane/event_time.h"
#include "src/xplane/flow_links.h"
#include "src/xplane/schema.h"
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

void WriteMetadataEvent(json::Writer& out, const char* kind, int64_t pid, const int64_t* tid,
                        std::string_view name) {
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

// An event's correlation id, kept until Finish(): a flow arrow goes from a
// host event (a runtime call) to a device event of the same id, wherever
// in the capture the two are.
struct CorrelationEnd {
  uint64_t id;
  int64_t pid;
  int64_t tid;
  int64_t ts_ns;
  bool host;    // On a host plane: the flow's start.
  bool device;  // On a device plane.
};

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
void WriteContextFlow(json::Writer& out, bool start, uint64_t id, std::string_view cat, int64_t pid,
                      int64_t tid, int64_t ts_ns) {
  WriteFlow(out, start, "flow", cat, id, pid, tid, ts_ns);
}

// What a plane's events are written with, shared by the writers of its
// jobs (read only while they run).
struct PlaneContext {
  PlaneContext(const PlaneVisitor& plane, int64_t pid)
      : visitor(plane), pid(pid), names(plane), keys(plane) {}
  const PlaneVisitor& visitor;
  const int64_t pid;
  const EventNames names;  // Escaped once per plane, not once per event.
  const StatNames keys;
  int64_t correlation_stat = -1;
  bool host_plane = false;
  bool device_plane = false;
  // Serving events (neuronprof/trace_events.h) live on the host plane.
  bool serving = false;
  int64_t instant_stat = -1;
  int64_t async_id_stat = -1;
};

// What crosses fragments of a plane: its pid, the names written, the
// events that end producer -> consumer flows.
struct PlaneSeen {
  int64_t pid = 0;
  bool named = false;
  absl::flat_hash_set<LineKey> named_lines;  // Thread names written.
  PlaneGather flow_events;
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
  explicit ChromeWriter(ByteSink* sink) : out_(sink) {}
  // A job's writer: its text stays in `buffer` (json::Writer without a sink).
  ChromeWriter(const ChromeWriter& parent, fmt::memory_buffer&& buffer)
      : out_(std::move(buffer)), plane_(parent.plane_) {}

  // The fragment's events, plane by plane, line by line; the header first.
  absl::Status Append(const XSpace& fragment) {
    if (!started_) {
      started_ = true;
      // Times are microseconds from the profile start, printed exactly from
      // integer ns: epoch microseconds (~1.8e15) would lose sub-microsecond
      // precision in every JSON reader's doubles. The epoch start is kept in
      // baseTimeNanoseconds, as Kineto's traces do.
      out_.Raw("{\"displayTimeUnit\":\"ns\",\"baseTimeNanoseconds\":");
      out_.Int(xplane::ProfileStartEpochNs(fragment));
      out_.Raw(",\"traceEvents\":[\n");
      warnings_.assign(fragment.warnings().begin(), fragment.warnings().end());
    }
    for (const XPlane& plane : fragment.planes()) {
      auto [it, inserted] = planes_.try_emplace(plane.name(), nullptr);
      if (inserted) {
        it->second = std::make_unique<PlaneSeen>();
        it->second->pid = static_cast<int64_t>(planes_.size());  // Planes in order, from 1.
      }
      if (plane.lines_size() > 0) WritePlane(PlaneVisitor(plane), *it->second);
    }
    return out_.status();
  }

  // The flows, whose ends may be in any fragment, and the trailer.
  absl::Status Finish() {
    WriteCorrelationFlows();
    for (const auto& [name, seen] : planes_) {
      if (seen->flow_events.events() > 0) WriteContextFlows(*seen);
    }
    // A final metadata event keeps the list free of a trailing comma.
    out_.Raw("{\"ph\":\"M\",\"name\":\"neuronprof\",\"pid\":0,\"args\":{\"warnings\":[");
    for (size_t i = 0; i < warnings_.size(); ++i) {
      if (i) out_.Char(',');
      out_.String(warnings_[i]);
    }
    if (unplaceable_ > 0) {
      if (!warnings_.empty()) out_.Char(',');
      out_.String(xplane::UnplaceableEventsWarning(unplaceable_));
    }
    out_.Raw("]}}\n]}\n");
    return out_.Finish();
  }

  JobBuffers TakeBuffers() { return {out_.TakeBuffer(), std::move(prepared_)}; }

  // What the writer holds between fragments, for tests: it grows with the
  // planes, lines and flow ends, never with the events.
  size_t HeldItems() const {
    size_t items = planes_.size() + correlation_ends_.size() + warnings_.size();
    for (const auto& [name, seen] : planes_) {
      items += seen->named_lines.size() + seen->flow_events.events();
    }
    return items;
  }

 private:
  // Events per job: ~2 MB of text, a few jobs in flight at a time.
  static constexpr int kJobEvents = 8192;
  static constexpr size_t kJobsInFlight = 3;

  void WritePlane(const PlaneVisitor& visitor, PlaneSeen& seen) {
    const int64_t pid = seen.pid;
    if (!seen.named) {
      seen.named = true;
      WriteMetadataEvent(out_, "process_name", pid, nullptr, visitor.Name());
    }
    PlaneContext plane(visitor, pid);
    plane.correlation_stat = visitor.StatId(xplane::kCorrelationIdStat);
    plane.host_plane = xplane::IsHostPlane(visitor.raw());
    plane.device_plane = xplane::IsDevicePlane(visitor.raw());
    plane.serving = visitor.Name() == xplane::kHostPlaneName;
    plane.instant_stat = plane.serving ? visitor.StatId(xplane::kInstantStat) : -1;
    plane.async_id_stat = plane.serving ? visitor.StatId(xplane::kAsyncIdStat) : -1;
    if (plane.serving) GatherFlowEvents(visitor, seen);
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
      const bool named =
          !async && seen.named_lines.insert(LineKey{line.Id(), std::string(line.Name())}).second;
      for (int at = 0; at == 0 || at < events; at += kJobEvents) {
        jobs.push_back({l, at, std::min(events, at + kJobEvents), at == 0 && named});
      }
    }
    if (visitor.NumEvents() <= kJobEvents) {
      for (const LineJob& job : jobs) WriteJob(job);
    } else {
      const auto run = [&](size_t index, JobBuffers&& buffers) {
        auto writer = std::make_unique<ChromeWriter>(*this, std::move(buffers.text));
        writer->prepared_ = std::move(buffers.prepared);
        writer->WriteJob(jobs[index]);
        out_.Prepare(writer->out_.text(), &writer->prepared_);
        return writer;
      };
      const auto take = [&](size_t, ChromeWriter& done) {
        unplaceable_ += done.unplaceable_;
        correlation_ends_.insert(correlation_ends_.end(), done.correlation_ends_.begin(),
                                 done.correlation_ends_.end());
        out_.Splice(done.prepared_);
      };
      if (pool_ == nullptr) pool_ = std::make_unique<JobPool>(kJobsInFlight);
      RunJobsInOrder(*pool_, jobs.size(), kJobsInFlight, run, take);
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
    const std::string prefix =
        fmt::format(FMT_COMPILE("{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":"), pid, tid);
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
      if (plane.correlation_stat >= 0) {
        const uint64_t id = CorrelationId(event, plane.correlation_stat);
        if (id != 0) {
          correlation_ends_.push_back(
              {id, pid, tid, time->start_ns, plane.host_plane, plane.device_plane});
        }
      }
      out_.MaybeFlush();
    }
  }

  // Launch -> device flows: every end of an id found on both a host and a
  // device plane ("s" on the host, "f" on the device), in capture order.
  void WriteCorrelationFlows() {
    absl::flat_hash_set<uint64_t> host, device;
    for (const CorrelationEnd& end : correlation_ends_) {
      if (end.host) host.insert(end.id);
      if (end.device) device.insert(end.id);
    }
    for (const CorrelationEnd& end : correlation_ends_) {
      if (!host.contains(end.id) || !device.contains(end.id)) continue;
      WriteFlowEvent(out_, end.host, end.id, end.pid, end.tid, end.ts_ns);
      out_.MaybeFlush();
    }
  }

  // The serving plane's events that produce or consume a context, kept
  // for WriteContextFlows (the two ends may be fragments apart).
  void GatherFlowEvents(const PlaneVisitor& visitor, PlaneSeen& seen) {
    const int64_t producer = visitor.StatId(xplane::kProducerIdStat);
    const int64_t consumer = visitor.StatId(xplane::kConsumerIdStat);
    if (producer < 0 && consumer < 0) return;
    seen.flow_events.Append(visitor.raw(), [&](const tensorflow::profiler::XEvent& event) {
      for (const auto& stat : event.stats()) {
        if (stat.metadata_id() == producer || stat.metadata_id() == consumer) return true;
      }
      return false;
    });
  }

  // Producer -> consumer flows: every linked pair gets an id.
  void WriteContextFlows(const PlaneSeen& seen) {
    for (const xplane::FlowLink& link : xplane::LinkFlows(PlaneVisitor(seen.flow_events.plane()))) {
      const uint64_t id = next_flow_id_++;
      const std::string cat = xplane::ContextTypeName(link.context_type);
      WriteContextFlow(out_, true, id, cat, seen.pid, link.producer.line->id(),
                       link.producer.start_ns);
      WriteContextFlow(out_, false, id, cat, seen.pid, link.consumer.line->id(),
                       link.consumer.start_ns);
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
  void WriteAsyncSpan(const EventVisitor& event, std::string_view track, int64_t pid, int64_t tid,
                      const xplane::EventTime& time) {
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
      const bool fresh = key == nullptr ? args.Key("?") : args.EscapedKey(key->name, key->escaped);
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

  json::Writer out_;
  PreparedBytes prepared_;               // A job's text as the sink takes it.
  const PlaneContext* plane_ = nullptr;  // The plane being written.
  int64_t unplaceable_ = 0;              // Events whose times do not fit int64 ns.
  // Across fragments (the job writers use only the above).
  bool started_ = false;
  std::vector<std::string> warnings_;  // The space's, from the first fragment.
  absl::flat_hash_map<std::string, std::unique_ptr<PlaneSeen>> planes_;
  std::vector<CorrelationEnd> correlation_ends_;
  uint64_t next_flow_id_ = 1;
  // The jobs' threads, started at the first job and kept from plane to
  // plane and fragment to fragment; last, so its idle threads end first.
  std::unique_ptr<JobPool> pool_;
};

}  // namespace

class ChromeTraceStream::Writer : public ChromeWriter {
 public:
  using ChromeWriter::ChromeWriter;
};

ChromeTraceStream::ChromeTraceStream(ByteSink* sink) : writer_(std::make_unique<Writer>(sink)) {}
ChromeTraceStream::~ChromeTraceStream() = default;
absl::Status ChromeTraceStream::AppendFragment(const XSpace& fragment) {
  return writer_->Append(fragment);
}
absl::Status ChromeTraceStream::FinishTrace() { return writer_->Finish(); }
size_t ChromeTraceStream::HeldItems() const { return writer_->HeldItems(); }

absl::Status WriteChromeTrace(const XSpace& space, ByteSink* sink) {
  ChromeTraceStream stream(sink);
  if (absl::Status s = stream.Append(space); !s.ok()) return s;
  return stream.Finish();
}

absl::Status WriteChromeTraceFile(const XSpace& space, const std::string& path) {
  return WriteFileStreamed(path, [&](ByteSink* sink) { return WriteChromeTrace(space, sink); });
}

}  // namespace exporter
}  // namespace neuronprof
