#include "src/collectors/host/host_collector.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/core/event_args.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace collectors {
namespace {

using internal::EventRecord;

int64_t TicksToPs(uint64_t from, uint64_t to, double ns_per_tick) {
  const double ticks = static_cast<double>(static_cast<int64_t>(to - from));
  return std::llround(ticks * ns_per_tick * 1000.0);
}

// Stats analysis::AnnotateOperatorEvents adds to an operator: scope,
// layer, tf_op, flops, bytes_accessed.
constexpr int kAnnotationStats = 5;

int StatsToReserve(const std::vector<core::DecodedArg>& args) {
  const bool is_operator =
      std::any_of(args.begin(), args.end(), [](const core::DecodedArg& arg) {
        return arg.key == xplane::kOpFrameworkStat;
      });
  return static_cast<int>(args.size()) + (is_operator ? kAnnotationStats : 0);
}

class HostCollector : public Collector {
 public:
  explicit HostCollector(const CaptureOptions& options) : options_(options) {}

  std::string name() const override { return "host"; }

  absl::Status Start() override {
    return core::StartRecording(options_.host_tracer_level,
                                options_.max_buffer_bytes);
  }

  absl::Status Stop() override {
    auto capture = core::StopRecording();
    if (!capture.ok()) return capture.status();
    capture_ = std::move(*capture);
    return absl::OkStatus();
  }

  absl::Status Collect(tensorflow::profiler::XSpace* space,
                       CollectStats* stats) override {
    AddHostPlane(capture_, space, stats, options_.buffer_advice);
    // The plane holds copies of everything now: free the pool (the records
    // were read in place from it) before annotation and export.
    capture_ = core::RecordedCapture();
    return absl::OkStatus();
  }

 private:
  CaptureOptions options_;
  core::RecordedCapture capture_;
};

}  // namespace

void AddHostPlane(const core::RecordedCapture& capture,
                  tensorflow::profiler::XSpace* space, CollectStats* stats,
                  const std::string& buffer_advice) {
  // Lines are relative to the profile start of the whole capture (the
  // Task Environment plane, set by the session before collecting), which
  // other collectors' planes share; the recorder itself starts a little
  // later (its buffer is committed first).
  int64_t base_epoch_ns = xplane::ProfileStartEpochNs(*space);
  if (base_epoch_ns == 0) base_epoch_ns = capture.start_epoch_ns;
  xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(space, xplane::kHostPlaneName));
  // Exporters that key by process (Kineto's pid) read it from here.
  plane.AddPlaneStat(xplane::kProcessIdStat, static_cast<int64_t>(getpid()));
  const double ns_per_tick = capture.clock.ns_per_tick();

  // Linux reuses thread ids: threads that shared an id share a line.
  std::map<int64_t, std::vector<const core::ThreadEvents*>> by_thread_id;
  for (const core::ThreadEvents& thread : capture.threads) {
    by_thread_id[thread.thread_id].push_back(&thread);
  }

  // Argument keys and string values repeat on every event: each distinct
  // byte string is resolved (checked, interned) once. The views point into
  // the pool, which outlives this function.
  absl::flat_hash_map<std::string_view, int64_t> stat_ids;
  auto stat_id = [&](std::string_view bytes) {
    auto it = stat_ids.find(bytes);
    if (it == stat_ids.end()) it = stat_ids.emplace(bytes, plane.StatMetadataId(bytes)).first;
    return it->second;
  };
  // Event names repeat the same way (a few hundred distinct operators).
  absl::flat_hash_map<std::string_view, int64_t> event_ids;
  auto event_id = [&](std::string_view bytes) {
    auto it = event_ids.find(bytes);
    if (it == event_ids.end()) it = event_ids.emplace(bytes, plane.EventMetadataId(bytes)).first;
    return it->second;
  };
  std::vector<core::DecodedArg> args;
  std::vector<const EventRecord*> events;
  for (const auto& [thread_id, threads] : by_thread_id) {
    events.clear();
    std::string line_name;
    for (const core::ThreadEvents* thread : threads) {
      for (const EventRecord& record : thread->events) events.push_back(&record);
      if (line_name.empty()) line_name = thread->thread_name;
    }
    if (events.empty()) continue;
    if (line_name.empty()) line_name = absl::StrCat("thread ", thread_id);
    // Parents before children: earlier start first, longer first on ties.
    // A thread that records no nested markers is in this order already.
    auto before = [](const EventRecord* a, const EventRecord* b) {
      if (a->start_ticks != b->start_ticks) {
        return static_cast<int64_t>(a->start_ticks - b->start_ticks) < 0;
      }
      return static_cast<int64_t>(a->end_ticks - b->end_ticks) > 0;
    };
    if (!std::is_sorted(events.begin(), events.end(), before)) {
      std::sort(events.begin(), events.end(), before);
    }
    const uint64_t line_start = events.front()->start_ticks;
    // Line times are relative to the capture start (the "Task Environment"
    // plane holds the epoch start), as TSL writes them: xprof turns them
    // into int64 picoseconds, which epoch nanoseconds would overflow.
    auto* line = plane.AddLine(
        thread_id, line_name,
        capture.clock.ToEpochNs(line_start) - base_epoch_ns);
    line->mutable_events()->Reserve(static_cast<int>(events.size()));
    uint64_t line_end = line_start;
    for (const EventRecord* record : events) {
      const int64_t metadata_id = event_id(core::PlainName(*record));
      auto* event = plane.AddEvent(
          line, metadata_id, TicksToPs(line_start, record->start_ticks, ns_per_tick),
          TicksToPs(record->start_ticks, record->end_ticks, ns_per_tick));
      if (static_cast<int64_t>(record->end_ticks - line_end) > 0) {
        line_end = record->end_ticks;
      }
      core::DecodeArgs(*record, &args);
      // One array of stat pointers per event, not one per doubling; an
      // operator's also holds the stats the operator annotation adds.
      if (!args.empty()) event->mutable_stats()->Reserve(StatsToReserve(args));
      for (const core::DecodedArg& arg : args) {
        tensorflow::profiler::XStat* stat = event->add_stats();
        stat->set_metadata_id(stat_id(arg.key));
        switch (arg.kind) {
          case 'i': stat->set_int64_value(arg.int_value); break;
          case 'u': stat->set_uint64_value(arg.uint_value); break;
          case 'd': stat->set_double_value(arg.double_value); break;
          // Interned (ref_value): op inputs and most marker strings repeat
          // per step.
          default: stat->set_ref_value(static_cast<uint64_t>(stat_id(arg.string_value))); break;
        }
      }
    }
    line->set_duration_ps(TicksToPs(line_start, line_end, ns_per_tick));
    stats->events += static_cast<int64_t>(events.size());
    stats->threads += 1;
  }

  stats->dropped += static_cast<int64_t>(capture.dropped);
  if (capture.dropped > 0) {
    plane.AddPlaneStat(xplane::kDroppedEventsStat,
                       static_cast<int64_t>(capture.dropped));
    space->add_warnings(absl::StrCat(
        "neuronprof: ", capture.dropped,
        " host events were dropped because the event buffer (",
        capture.buffer_bytes,
        " bytes) was full; ", buffer_advice));
  }
  // Counted apart from the drops: no buffer size would have kept these.
  if (capture.too_large > 0) {
    space->add_warnings(absl::StrCat(
        "neuronprof: ", capture.too_large,
        " host markers were too large to record and were left out: the "
        "largest took ", capture.largest_too_large,
        " bytes (name plus arguments, encoded), above the limit of ",
        core::kBlockBytes, " bytes per marker; shorten its name or string "
        "arguments"));
  }
}

std::unique_ptr<Collector> CreateHostCollector(const CaptureOptions& options) {
  return std::make_unique<HostCollector>(options);
}

}  // namespace collectors
}  // namespace neuronprof
