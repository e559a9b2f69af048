#include "src/collectors/host/host_collector.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/collectors/core_status.h"
#include "src/collectors/host/stack_symbolizer.h"
#include "src/core/event_args.h"
#include "src/xplane/collective_name.h"
#include "src/xplane/plane_sink.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace collectors {
namespace {

using internal::EventRecord;

int64_t TicksToPs(uint64_t from, uint64_t to, double ns_per_tick) {
  const double ticks = static_cast<double>(static_cast<int64_t>(to - from));
  return std::llround(ticks * ns_per_tick * 1000.0);
}

// Stats analysis::AnnotateOperatorEvents adds to an operator event: tf_op,
// flops, bytes_accessed (scope and layer go on its metadata).
constexpr int kAnnotationStats = 3;

// Stats that every call of an operator with the same inputs shares. They
// go on one event metadata per distinct signature (a few hundred in a
// training loop) instead of on each of a million events; the events keep
// their own (sequence number, forward thread). Stats xprof reads with
// TSL's event-only GetStat (tf_op, flops, bytes_accessed, memory stats)
// stay on the events.
bool IsSignatureStat(std::string_view key) {
  return key == xplane::kOpFrameworkStat || key == xplane::kOpDirectionStat ||
         key == xplane::kOpInputDimsStat || key == xplane::kOpInputTypesStat ||
         key == xplane::kOpInputValuesStat;
}

// The stat name of a reserved argument key of a serving record.
std::string_view ReservedStatName(std::string_view key) {
  if (key == internal::kCounterValueKey) return xplane::kCounterValueStat;
  if (key == internal::kAsyncIdKey) return xplane::kAsyncIdStat;
  return key;
}

// Where a record goes, from its first argument's key.
enum class RecordKind { kMarker, kInstant, kCounter, kAsync };
RecordKind KindOf(const EventRecord& record) {
  if (record.args_offset == 0) return RecordKind::kMarker;
  const std::string_view key = core::FirstArgKey(record);
  if (key.size() != 2 || key[0] != '\x01') return RecordKind::kMarker;
  if (key == internal::kInstantKey) return RecordKind::kInstant;
  if (key == internal::kCounterValueKey) return RecordKind::kCounter;
  if (key == internal::kAsyncTrackKey) return RecordKind::kAsync;
  return RecordKind::kMarker;
}

// Writes records' names and arguments into one host plane, resolving
// (checking, interning) each distinct key, string value, name and operator
// signature once. The views point into the pool, which outlives it.
class HostPlaneStats {
 public:
  explicit HostPlaneStats(xplane::XPlaneBuilder* plane) : plane_(*plane) {}

  // `site`: the record's NEURONPROF_SCOPE call site, or nullptr.
  void Write(std::string_view name, const std::vector<core::DecodedArg>& args,
             const internal::SourceLocation* site, tensorflow::profiler::XEvent* event) {
    if (site != nullptr) {  // No arguments, no signature.
      event->set_metadata_id(SiteId(site, name));
      return;
    }
    const int64_t signature = SignatureMetadataId(name, args);
    event->set_metadata_id(signature != 0 ? signature : NameId(name));
    int own = 0;
    for (size_t i = 0; i < args.size(); ++i) own += ArgKey(i, args[i].key).signature ? 0 : 1;
    if (own == 0 && signature == 0) return;
    // One array of stat pointers per event, not one per doubling; an
    // operator's also holds the stats the operator annotation adds.
    event->mutable_stats()->Reserve(own + (signature != 0 ? kAnnotationStats : 0));
    for (size_t i = 0; i < args.size(); ++i) {
      const Key key = ArgKey(i, args[i].key);
      if (key.signature) continue;
      if (args[i].key == internal::kScriptStackKey) continue;  // With the next one.
      if (args[i].key == internal::kStackKey) {
        const std::string_view script = i > 0 && args[i - 1].key == internal::kScriptStackKey
                                            ? args[i - 1].string_value
                                            : std::string_view();
        if (const int64_t ref = StackRef(script, args[i].string_value); ref != 0) {
          tensorflow::profiler::XStat* stat = event->add_stats();
          stat->set_metadata_id(key.id);
          stat->set_ref_value(static_cast<uint64_t>(ref));
        }
        continue;
      }
      SetValue(args[i], key.id, event->add_stats());
    }
  }

 private:
  struct Key {
    int64_t id;
    bool signature;
  };

  // The key of a record's i-th argument. Records of one call site repeat
  // their keys in the same order: comparing with the previous record's
  // key at that position skips the hash look-up for most arguments.
  Key ArgKey(size_t i, std::string_view bytes) {
    if (i >= recent_.size()) recent_.resize(i + 1);
    auto& [recent_bytes, recent_key] = recent_[i];
    if (recent_key.id == 0 || recent_bytes != bytes) {  // Ids start at 1.
      recent_key = StatKey(bytes);
      recent_bytes = bytes;  // A view into the pool, like the map's keys.
    }
    return recent_key;
  }

  // By value: a later insertion may move the map's entries. Compact keys
  // (xplane::kCompactKeys) become the stat names they stand for.
  Key StatKey(std::string_view bytes) {
    auto it = stat_keys_.find(bytes);
    if (it == stat_keys_.end()) {
      const std::string_view name =
          bytes == internal::kStackKey || bytes == internal::kScriptStackKey
              ? xplane::kStackStat
              : xplane::ExpandCompactKey(bytes);
      it = stat_keys_.emplace(bytes, Key{plane_.StatMetadataId(name), IsSignatureStat(name)}).first;
    }
    return it->second;
  }

  // A string value as stat metadata (XStat ref_value), taken as it is.
  int64_t ValueRef(std::string_view bytes) {
    auto it = value_refs_.find(bytes);
    if (it == value_refs_.end())
      it = value_refs_.emplace(bytes, plane_.StatMetadataId(bytes)).first;
    return it->second;
  }

  // A recorded call stack, symbolized once per distinct stack (the
  // symbolizer, once per address), below the op's TorchScript frames
  // (`script`, text); 0 when no frame is left.
  int64_t StackRef(std::string_view script, std::string_view raw) {
    std::string scripted_key;
    if (!script.empty()) {
      scripted_key = absl::StrCat(absl::string_view(raw.data(), raw.size()), "\n",
                                  absl::string_view(script.data(), script.size()));
      auto it = scripted_stack_refs_.find(scripted_key);
      if (it != scripted_stack_refs_.end()) return it->second;
    } else if (auto it = stack_refs_.find(raw); it != stack_refs_.end()) {
      return it->second;
    }
    if (symbolizer_ == nullptr) symbolizer_ = std::make_unique<StackSymbolizer>();
    std::string text(script);
    const std::string frames = symbolizer_->Symbolize(raw);
    if (!text.empty() && !frames.empty()) text.push_back('\n');
    text += frames;
    const int64_t ref = text.empty() ? 0 : plane_.StatMetadataId(text);
    if (!script.empty())
      return scripted_stack_refs_.emplace(std::move(scripted_key), ref).first->second;
    return stack_refs_.emplace(raw, ref).first->second;
  }

  // ---- Serving records (neuronprof/trace_events.h).
 public:
  // An instant (TraceInstant): its own metadata per name, marked with the
  // stat "instant", then its arguments after the reserved one.
  void WriteInstant(std::string_view name, const std::vector<core::DecodedArg>& args,
                    tensorflow::profiler::XEvent* event) {
    auto it = instant_ids_.find(name);
    if (it == instant_ids_.end()) {
      tensorflow::profiler::XEventMetadata* metadata = plane_.NewEventMetadata(name);
      tensorflow::profiler::XStat* stat = metadata->add_stats();
      stat->set_metadata_id(plane_.StatMetadataId(xplane::kInstantStat));
      stat->set_int64_value(1);
      it = instant_ids_.emplace(name, metadata->id()).first;
    }
    event->set_metadata_id(it->second);
    WriteArgsFrom(1, args, event);
  }

  // An event of a serving line (async span, counter sample) named `name`,
  // with `args` from index `first` as stats (reserved keys under the stat
  // names they stand for).
  void WriteNamed(std::string_view name, size_t first, const std::vector<core::DecodedArg>& args,
                  tensorflow::profiler::XEvent* event) {
    event->set_metadata_id(NameId(name));
    WriteArgsFrom(first, args, event);
  }

  void WriteArgsFrom(size_t first, const std::vector<core::DecodedArg>& args,
                     tensorflow::profiler::XEvent* event) {
    for (size_t i = first; i < args.size(); ++i) {
      SetValue(args[i], StatKey(ReservedStatName(args[i].key)).id, event->add_stats());
    }
  }

 private:
  int64_t NameId(std::string_view bytes) {
    auto it = name_ids_.find(bytes);
    if (it == name_ids_.end()) it = name_ids_.emplace(bytes, plane_.EventMetadataId(bytes)).first;
    return it->second;
  }

  // One metadata per call site, named like the marker, with the stat
  // "source" = "file:line": the location costs one stat per site, none per
  // event. Two sites with one name get two metadata of that name.
  int64_t SiteId(const internal::SourceLocation* site, std::string_view name) {
    if (site == last_site_) return last_site_id_;
    auto it = site_ids_.find(site);
    if (it == site_ids_.end()) {
      tensorflow::profiler::XEventMetadata* metadata = plane_.NewEventMetadata(name);
      tensorflow::profiler::XStat* stat = metadata->add_stats();
      stat->set_metadata_id(plane_.StatMetadataId(xplane::kSourceStat));
      const std::string text = absl::StrCat(site->file, ":", site->line);
      stat->set_ref_value(static_cast<uint64_t>(plane_.StatMetadataId(text)));
      it = site_ids_.emplace(site, metadata->id()).first;
    }
    last_site_ = site;
    last_site_id_ = it->second;
    return last_site_id_;
  }

  void SetValue(const core::DecodedArg& arg, int64_t key_id, tensorflow::profiler::XStat* stat) {
    stat->set_metadata_id(key_id);
    switch (arg.kind) {
      case 'i':
        stat->set_int64_value(arg.int_value);
        break;
      case 'u':
        stat->set_uint64_value(arg.uint_value);
        break;
      case 'd':
        stat->set_double_value(arg.double_value);
        break;
      // Interned (ref_value): op inputs and most marker strings repeat
      // per step.
      default:
        stat->set_ref_value(static_cast<uint64_t>(ValueRef(arg.string_value)));
        break;
    }
  }

  // The metadata of `name` with these signature stats, made on first use;
  // 0 when the record has none (not an operator). Looked up by the values'
  // own bytes (a string's after its length): a call seen before costs one
  // look-up, not one per string input.
  int64_t SignatureMetadataId(std::string_view name, const std::vector<core::DecodedArg>& args) {
    signature_.clear();
    for (size_t i = 0; i < args.size(); ++i) {
      const core::DecodedArg& arg = args[i];
      const Key key = ArgKey(i, arg.key);
      if (!key.signature) continue;
      int64_t value = arg.int_value;
      if (arg.kind == 'u') value = static_cast<int64_t>(arg.uint_value);
      if (arg.kind == 'd') std::memcpy(&value, &arg.double_value, sizeof(value));
      if (arg.kind == 's') value = static_cast<int64_t>(arg.string_value.size());
      const int64_t parts[] = {key.id, arg.kind, value};
      signature_.append(reinterpret_cast<const char*>(parts), sizeof(parts));
      if (arg.kind == 's') signature_.append(arg.string_value.data(), arg.string_value.size());
    }
    if (signature_.empty()) return 0;
    signature_.append(name.data(), name.size());
    auto it = signature_ids_.find(signature_);
    if (it != signature_ids_.end()) return it->second;
    tensorflow::profiler::XEventMetadata* metadata = plane_.NewEventMetadata(name);
    for (const core::DecodedArg& arg : args) {
      const Key key = StatKey(arg.key);
      if (key.signature) SetValue(arg, key.id, metadata->add_stats());
    }
    signature_ids_.emplace(signature_, metadata->id());
    return metadata->id();
  }

  xplane::XPlaneBuilder& plane_;
  absl::flat_hash_map<std::string_view, Key> stat_keys_;
  absl::flat_hash_map<std::string_view, int64_t> value_refs_;
  absl::flat_hash_map<std::string_view, int64_t> name_ids_;
  absl::flat_hash_map<std::string, int64_t> signature_ids_;
  absl::flat_hash_map<const internal::SourceLocation*, int64_t> site_ids_;
  absl::flat_hash_map<std::string_view, int64_t> instant_ids_;
  absl::flat_hash_map<std::string_view, int64_t> stack_refs_;
  absl::flat_hash_map<std::string, int64_t> scripted_stack_refs_;
  std::unique_ptr<StackSymbolizer> symbolizer_;  // Made at the first stack.
  const internal::SourceLocation* last_site_ = nullptr;
  int64_t last_site_id_ = 0;
  std::vector<std::pair<std::string_view, Key>> recent_;
  std::string signature_;  // The key being looked up, reused.
};

// The order of a line's events: parents before children (earlier start
// first, longer first on ties), then by name, so that equal times order
// alike however the records were laid out. A thread that records no
// nested markers is in this order already.
bool Before(const EventRecord& a, const EventRecord& b) {
  if (a.start_ticks != b.start_ticks)
    return static_cast<int64_t>(a.start_ticks - b.start_ticks) < 0;
  if (a.end_ticks != b.end_ticks) return static_cast<int64_t>(a.end_ticks - b.end_ticks) > 0;
  if (a.name != b.name) return std::less<const char*>()(a.name, b.name);
  if (a.name_length != b.name_length) return a.name_length < b.name_length;
  return a.args_offset < b.args_offset;
}

// Whether `thread`'s records are all markers (no counter or async span),
// in line order: its line is then written from them as they are.
bool InLineOrder(const core::ThreadEvents& thread) {
  if (thread.events.empty()) return false;  // A thread whose events all dropped: no line.
  const EventRecord* previous = nullptr;
  for (const EventRecord& record : thread.events) {
    const RecordKind kind = KindOf(record);
    if (kind == RecordKind::kCounter || kind == RecordKind::kAsync) return false;
    if (previous != nullptr && Before(record, *previous)) return false;
    previous = &record;
  }
  return true;
}

// Where each kind of record goes: markers and instants (one thread's
// line), counters and async spans (of every thread).
struct ByKind {
  std::vector<const EventRecord*>* events;
  std::vector<const EventRecord*>* counters;
  std::vector<const EventRecord*>* spans;
};

void AddByKind(core::RecordsInPool::const_iterator begin, core::RecordsInPool::const_iterator end,
               const ByKind& to) {
  for (auto it = begin; it != end; ++it) {
    switch (KindOf(*it)) {
      case RecordKind::kCounter:
        to.counters->push_back(&*it);
        break;
      case RecordKind::kAsync:
        to.spans->push_back(&*it);
        break;
      default:
        to.events->push_back(&*it);
        break;
    }
  }
}

// Runs `there` on another thread while `here` runs on this one.
template <typename Here, typename There>
void SideBySide(const Here& here, const There& there) {
  std::thread other(there);
  here();
  other.join();
}

// The same for all of `records`, in their order; from `split_events`
// records on, the second half (from a block start) is classified on another
// core.
void AddByKind(const core::RecordsInPool& records, size_t split_events, const ByKind& to) {
  size_t middle = 0;
  const auto second_begin = records.size() >= std::max<size_t>(split_events, 2)
                                ? records.BlockStartOf(records.size() / 2, &middle)
                                : records.begin();
  if (middle == 0) return AddByKind(records.begin(), records.end(), to);
  std::vector<const EventRecord*> events, counters, spans;
  events.reserve(records.size() - middle);
  SideBySide([&] { AddByKind(records.begin(), second_begin, to); },
             [&] {
               AddByKind(second_begin, records.end(), {&events, &counters, &spans});
             });
  to.events->insert(to.events->end(), events.begin(), events.end());
  to.counters->insert(to.counters->end(), counters.begin(), counters.end());
  to.spans->insert(to.spans->end(), spans.begin(), spans.end());
}

// std::is_sorted, from `split_events` on in two halves on two cores.
template <typename Before>
bool IsSorted(const std::vector<const EventRecord*>& events, size_t split_events,
              const Before& before) {
  if (events.size() < std::max<size_t>(split_events, 2)) {
    return std::is_sorted(events.begin(), events.end(), before);
  }
  const auto middle = events.begin() + events.size() / 2;
  bool first_sorted = false, second_sorted = false;
  // The halves overlap by one: every neighbouring pair is compared.
  SideBySide([&] { second_sorted = std::is_sorted(middle, events.end(), before); },
             [&] { first_sorted = std::is_sorted(events.begin(), middle + 1, before); });
  return first_sorted && second_sorted;
}

// std::sort, from `split_events` on as two halves sorted on two cores and
// merged: a libtorch thread's records come in the order ops ended
// (children before parents), so its line is sorted whole.
template <typename Before>
void Sort(std::vector<const EventRecord*>* events, size_t split_events, const Before& before) {
  if (events->size() < std::max<size_t>(split_events, 2)) {
    std::sort(events->begin(), events->end(), before);
    return;
  }
  const auto middle = events->begin() + static_cast<std::ptrdiff_t>(events->size() / 2);
  SideBySide([&] { std::sort(middle, events->end(), before); },
             [&] { std::sort(events->begin(), middle, before); });
  std::inplace_merge(events->begin(), middle, events->end(), before);
}

// Where the plane's finished pieces go: nowhere (the plane keeps its lines:
// an XSpace); a sink that writes each line out, in chunks of
// kStreamChunkEvents events while it is built, and takes it off the plane;
// or fragments (export/trace_stream.h), whose lines take the events over
// while it is built. Streamed or cut, the plane never holds more than one
// chunk or one fragment of events.
class LineOutput {
 public:
  explicit LineOutput(xplane::XPlaneSink* sink) : sink_(sink) {}
  // Fragments of at most `max_events` events into `fragment`, handed to
  // `ready` (which may take them), then cleared.
  LineOutput(tensorflow::profiler::XPlane* fragment, int max_events,
             const std::function<absl::Status()>* ready)
      : sink_(nullptr), fragment_(fragment), max_events_(max_events), ready_(ready) {}
  bool streams() const { return sink_ != nullptr || fragment_ != nullptr; }

  // After each event added to `line`.
  void EventAdded(tensorflow::profiler::XLine* line) {
    if (fragment_ != nullptr) {
      if (pending_ + line->events_size() >= max_events_) {
        MoveToFragment(line);
        FragmentReady();
      }
      return;
    }
    if (sink_ != nullptr && line->events_size() >= kStreamChunkEvents) WriteEvents(line);
  }
  // The plane's last line is complete.
  void LineDone(tensorflow::profiler::XPlane* plane) {
    if (!streams()) return;
    tensorflow::profiler::XLine* line = plane->mutable_lines(plane->lines_size() - 1);
    if (fragment_ != nullptr) {
      // A line whose events all went in earlier fragments needs no piece.
      if (line->events_size() > 0 || !line_handed_) {
        MoveToFragment(line)->set_duration_ps(line->duration_ps());
      }
      line_handed_ = false;
    } else {
      WriteEvents(line);
      if (status_.ok()) status_ = sink_->EndLine(*line);
    }
    plane->mutable_lines()->RemoveLast();  // Kept cleared, for the next line.
  }
  // The plane (its lines gone when streamed) is complete.
  absl::Status PlaneDone(const tensorflow::profiler::XPlane& plane) {
    if (sink_ != nullptr && status_.ok()) status_ = sink_->EndPlane(plane);
    // The last fragment; the only one of a plane without events, which
    // still brings the space's other planes and fields.
    if (fragment_ != nullptr && (pending_ > 0 || !handed_)) FragmentReady();
    return status_;
  }

 private:
  void WriteEvents(tensorflow::profiler::XLine* line) {
    if (status_.ok() && line->events_size() > 0) status_ = sink_->AddEvents(line->events());
    line->mutable_events()->Clear();  // The events stay allocated, for reuse.
  }

  // The events of `line` (the one being built) go to a line of its own in
  // the fragment: swapped, so the line gets the fragment's cleared ones.
  tensorflow::profiler::XLine* MoveToFragment(tensorflow::profiler::XLine* line) {
    tensorflow::profiler::XLine* piece = fragment_->add_lines();
    piece->set_id(line->id());
    piece->set_display_id(line->display_id());
    piece->set_name(line->name());
    piece->set_display_name(line->display_name());
    piece->set_timestamp_ns(line->timestamp_ns());
    piece->mutable_events()->Swap(line->mutable_events());
    pending_ += piece->events_size();
    line_handed_ = true;
    return piece;
  }

  void FragmentReady() {
    handed_ = true;
    if (status_.ok()) status_ = (*ready_)();
    pending_ = 0;
    fragment_->mutable_lines()->Clear();  // Lines and events stay allocated, for reuse.
  }

  xplane::XPlaneSink* const sink_;
  absl::Status status_;  // The sink's (or `ready`'s) first error.
  tensorflow::profiler::XPlane* const fragment_ = nullptr;
  const int max_events_ = 0;
  const std::function<absl::Status()>* const ready_ = nullptr;
  int pending_ = 0;           // Events in the fragment.
  bool handed_ = false;       // A fragment went to `ready`.
  bool line_handed_ = false;  // The line being built has a piece in a fragment.
};

// The host plane's lines of async spans and counters (names in
// src/xplane/schema.h), from records of every thread.
struct ServingLines {
  xplane::XPlaneBuilder* plane;
  LineOutput* output;
  HostPlaneStats* plane_stats;
  const core::TickConverter* clock;
  int64_t base_epoch_ns;

  // One line per track and overlap lane; returns the events written.
  int64_t AddAsyncLines(std::vector<const EventRecord*>* spans) const {
    std::vector<core::DecodedArg> args;
    // Track -> its spans (views into the pool, which outlives this).
    std::map<std::string_view, std::vector<const EventRecord*>> tracks;
    for (const EventRecord* record : *spans) {
      core::DecodeArgs(*record, &args);
      if (args.size() >= 2) tracks[args[0].string_value].push_back(record);
    }
    int64_t ordinal = 0;
    int64_t written = 0;
    for (auto& [track, records] : tracks) {
      std::sort(records.begin(), records.end(), [](const EventRecord* a, const EventRecord* b) {
        return static_cast<int64_t>(a->start_ticks - b->start_ticks) < 0;
      });
      // Lane i holds spans that do not overlap; a span takes the first
      // lane free at its start, so viewers that nest by time never see
      // two spans cross.
      std::vector<uint64_t> lane_end;
      std::vector<std::vector<const EventRecord*>> lanes;
      for (const EventRecord* record : records) {
        size_t lane = 0;
        while (lane < lanes.size() &&
               static_cast<int64_t>(record->start_ticks - lane_end[lane]) < 0) {
          ++lane;
        }
        if (lane == lanes.size()) {
          lanes.emplace_back();
          lane_end.push_back(record->start_ticks);
        }
        lanes[lane].push_back(record);
        lane_end[lane] = EndTicks(*record);
      }
      for (const std::vector<const EventRecord*>& lane : lanes) {
        tensorflow::profiler::XLine* line =
            NewLine(xplane::kAsyncLineIdBase + ordinal, track, lane.front()->start_ticks);
        line->set_display_id(xplane::kAsyncLineDisplayIdBase + ordinal);
        ++ordinal;
        for (const EventRecord* record : lane) {
          core::DecodeArgs(*record, &args);
          // args[0] is the track; the id and any others become stats.
          plane_stats->WriteNamed(core::PlainName(*record), 1, args,
                                  AddEvent(line, lane.front()->start_ticks, *record));
          output->EventAdded(line);
        }
        Close(line, lane.front()->start_ticks, LaneEnd(lane));
        written += static_cast<int64_t>(lane.size());
      }
    }
    return written;
  }

  // Every counter sample on one line, in time order.
  int64_t AddCounterLine(std::vector<const EventRecord*>* counters) const {
    if (counters->empty()) return 0;
    std::stable_sort(counters->begin(), counters->end(),
                     [](const EventRecord* a, const EventRecord* b) {
                       return static_cast<int64_t>(a->start_ticks - b->start_ticks) < 0;
                     });
    const uint64_t start = counters->front()->start_ticks;
    tensorflow::profiler::XLine* line =
        NewLine(xplane::kCounterLineId, xplane::kCounterLineName, start);
    std::vector<core::DecodedArg> args;
    for (const EventRecord* record : *counters) {
      core::DecodeArgs(*record, &args);
      plane_stats->WriteNamed(core::PlainName(*record), 0, args, AddEvent(line, start, *record));
      output->EventAdded(line);
    }
    Close(line, start, counters->back()->start_ticks);
    return static_cast<int64_t>(counters->size());
  }

 private:
  // A span's end; a clock that stepped back between threads gives 0 length.
  static uint64_t EndTicks(const EventRecord& record) {
    return static_cast<int64_t>(record.end_ticks - record.start_ticks) < 0 ? record.start_ticks
                                                                           : record.end_ticks;
  }
  static uint64_t LaneEnd(const std::vector<const EventRecord*>& lane) {
    uint64_t end = lane.front()->start_ticks;
    for (const EventRecord* record : lane) {
      if (static_cast<int64_t>(EndTicks(*record) - end) > 0) end = EndTicks(*record);
    }
    return end;
  }
  tensorflow::profiler::XLine* NewLine(int64_t id, std::string_view name, uint64_t start) const {
    return plane->AddLine(id, name, clock->ToEpochNs(start) - base_epoch_ns);
  }
  tensorflow::profiler::XEvent* AddEvent(tensorflow::profiler::XLine* line, uint64_t line_start,
                                         const EventRecord& record) const {
    const double ns_per_tick = clock->ns_per_tick();
    return plane->AddEvent(line, /*metadata_id=*/0,
                           TicksToPs(line_start, record.start_ticks, ns_per_tick),
                           TicksToPs(record.start_ticks, EndTicks(record), ns_per_tick));
  }
  void Close(tensorflow::profiler::XLine* line, uint64_t start, uint64_t end) const {
    line->set_duration_ps(TicksToPs(start, end, clock->ns_per_tick()));
    output->LineDone(plane->plane());
  }
};

class HostCollector : public Collector {
 public:
  explicit HostCollector(const CollectorOptions& options) : options_(options) {}

  std::string name() const override { return "host"; }

  absl::Status Start() override {
    return ToStatus(core::StartRecording(options_.host_tracer_level, options_.max_buffer_bytes));
  }

  absl::Status Stop() override {
    auto capture = core::StopRecording();
    if (!capture.ok()) return ToStatus(capture.status());
    capture_ = std::move(*capture);
    return absl::OkStatus();
  }

  absl::Status Collect(tensorflow::profiler::XSpace* space, CollectStats* stats) override {
    AddHostPlane(capture_, space, stats, options_.buffer_advice);
    // The plane holds copies of everything now: free the pool (the records
    // were read in place from it) before annotation and export.
    capture_ = core::RecordedCapture();
    return absl::OkStatus();
  }

  core::RecordedCapture TakeRecords(tensorflow::profiler::XSpace* space) {
    AddHostWarnings(capture_, space, options_.buffer_advice);
    return std::move(capture_);
  }

 private:
  CollectorOptions options_;
  core::RecordedCapture capture_;
};

// Writes one line's records as its events.
struct LineWriter {
  uint64_t line_start;
  double ns_per_tick;

  // `record` as an event of `line`; `*line_end` becomes its end when later.
  tensorflow::profiler::XEvent* Add(const EventRecord& record, HostPlaneStats* plane_stats,
                                    xplane::XPlaneBuilder* plane, tensorflow::profiler::XLine* line,
                                    std::vector<core::DecodedArg>* args, uint64_t* line_end) const {
    auto* event = plane->AddEvent(line, /*metadata_id=*/0,
                                  TicksToPs(line_start, record.start_ticks, ns_per_tick),
                                  TicksToPs(record.start_ticks, record.end_ticks, ns_per_tick));
    if (static_cast<int64_t>(record.end_ticks - *line_end) > 0) *line_end = record.end_ticks;
    Describe(record, plane_stats, args, event);
    return event;
  }

  // The metadata and stats of `record`'s event.
  static void Describe(const EventRecord& record, HostPlaneStats* plane_stats,
                       std::vector<core::DecodedArg>* args, tensorflow::profiler::XEvent* event) {
    core::DecodeArgs(record, args);
    if (!args->empty() && (*args)[0].key == internal::kInstantKey) {
      plane_stats->WriteInstant(core::PlainName(record), *args, event);
    } else {
      plane_stats->Write(core::PlainName(record), *args, core::SourceLocationOf(record), event);
    }
  }
};

// Writes `events` into `line` (of a kept plane), the second half on another
// thread into a scratch plane with ids of its own. Then, in order, each of
// the second half's records that made metadata there is described again
// with the plane's `plane_stats` (which makes here what one pass would
// have made, in its order), the scratch ids are mapped to the plane's and
// the events move over: the plane one pass writes, ids included.
void AddInTwoHalves(const LineWriter& writer, const std::vector<const EventRecord*>& events,
                    HostPlaneStats* plane_stats, xplane::XPlaneBuilder* plane,
                    tensorflow::profiler::XLine* line, uint64_t* line_end) {
  using tensorflow::profiler::XEvent;
  using tensorflow::profiler::XPlane;
  const size_t split = events.size() / 2;
  google::protobuf::Arena* const arena = line->GetArena();
  XPlane* const scratch = google::protobuf::Arena::CreateMessage<XPlane>(arena);
  std::unique_ptr<XPlane> scratch_owner(arena == nullptr ? scratch : nullptr);
  tensorflow::profiler::XLine* const half = scratch->add_lines();
  std::vector<size_t> made_metadata;  // Indices into `events`.
  uint64_t half_end = writer.line_start;
  std::thread second([&] {
    xplane::XPlaneBuilder scratch_plane(scratch);
    HostPlaneStats scratch_stats(&scratch_plane);
    std::vector<core::DecodedArg> args;
    half->mutable_events()->Reserve(static_cast<int>(events.size() - split));
    size_t metadata = 0;
    for (size_t i = split; i < events.size(); ++i) {
      writer.Add(*events[i], &scratch_stats, &scratch_plane, half, &args, &half_end);
      const size_t now = scratch->event_metadata_size() + scratch->stat_metadata_size();
      if (now != metadata) made_metadata.push_back(i);
      metadata = now;
    }
  });
  std::vector<core::DecodedArg> args;
  for (size_t i = 0; i < split; ++i) {
    writer.Add(*events[i], plane_stats, plane, line, &args, line_end);
  }
  second.join();
  if (static_cast<int64_t>(half_end - *line_end) > 0) *line_end = half_end;

  // Each event metadata the second half made was its record's own; its
  // stat metadata are found by name (the replay made each here).
  std::vector<int64_t> event_ids(scratch->event_metadata_size() + 1, 0);
  XEvent again;
  for (const size_t i : made_metadata) {
    again.Clear();
    LineWriter::Describe(*events[i], plane_stats, &args, &again);
    event_ids[half->events(static_cast<int>(i - split)).metadata_id()] = again.metadata_id();
  }
  std::vector<int64_t> stat_ids(scratch->stat_metadata_size() + 1, 0);
  for (const auto& [id, metadata] : scratch->stat_metadata()) {
    stat_ids[id] = plane->StatMetadataId(metadata.name());
  }
  auto* half_events = half->mutable_events();
  for (XEvent& event : *half_events) {
    event.set_metadata_id(event_ids[event.metadata_id()]);
    for (tensorflow::profiler::XStat& stat : *event.mutable_stats()) {
      stat.set_metadata_id(stat_ids[stat.metadata_id()]);
      if (stat.value_case() == tensorflow::profiler::XStat::kRefValue) {
        stat.set_ref_value(static_cast<uint64_t>(stat_ids[stat.ref_value()]));
      }
    }
  }
  // Each event's pointer moves over (no copy), then leaves the scratch line.
  auto* line_events = line->mutable_events();
  const int moved = half_events->size();
  for (int i = 0; i < moved; ++i) {
    if (arena != nullptr) {
      line_events->UnsafeArenaAddAllocated(half_events->Mutable(i));
    } else {
      line_events->AddAllocated(half_events->Mutable(i));
    }
  }
  for (int i = 0; i < moved; ++i) {
    if (arena != nullptr) {
      half_events->UnsafeArenaReleaseLast();
    } else {
      static_cast<void>(half_events->ReleaseLast());  // Owned by `line` now.
    }
  }
}

// The host plane of `capture` into `proto` (an empty plane, or one with
// metadata to reuse), its lines going where `output` says. Line times are
// relative to `base_epoch_ns`.
void BuildHostPlane(const core::RecordedCapture& capture, int64_t base_epoch_ns,
                    tensorflow::profiler::XPlane* proto, CollectStats* stats, LineOutput* output,
                    size_t split_line_events = kSplitLineEvents) {
  xplane::XPlaneBuilder plane(proto);
  // Exporters that key by process (Kineto's pid) read it from here.
  plane.AddPlaneStat(xplane::kProcessIdStat, static_cast<int64_t>(getpid()));
  const double ns_per_tick = capture.clock.ns_per_tick();

  // Linux reuses thread ids: threads that shared an id share a line.
  std::map<int64_t, std::vector<const core::ThreadEvents*>> by_thread_id;
  for (const core::ThreadEvents& thread : capture.threads) {
    by_thread_id[thread.thread_id].push_back(&thread);
  }

  HostPlaneStats plane_stats(&plane);
  std::vector<core::DecodedArg> args;
  std::vector<const EventRecord*> events;
  std::vector<const EventRecord*> counters;  // Of every thread.
  std::vector<const EventRecord*> spans;     // Async spans, of every thread.
  for (const auto& [thread_id, threads] : by_thread_id) {
    events.clear();
    std::string line_name;
    // One thread's markers in line order are read where they are, without
    // an index of pointers (a sorted snapshot's: SortSnapshotRecords).
    const core::ThreadEvents* in_order =
        threads.size() == 1 && InLineOrder(*threads.front()) ? threads.front() : nullptr;
    if (in_order == nullptr) {
      // One index for the line, grown once (its records are mostly markers).
      size_t records = 0;
      for (const core::ThreadEvents* thread : threads) records += thread->events.size();
      events.reserve(records);
    }
    for (const core::ThreadEvents* thread : threads) {
      if (in_order != nullptr) break;
      AddByKind(thread->events, split_line_events, {&events, &counters, &spans});
      if (line_name.empty()) line_name = thread->thread_name;
    }
    if (in_order != nullptr) line_name = in_order->thread_name;
    if (events.empty() && in_order == nullptr) continue;
    if (line_name.empty()) line_name = absl::StrCat("thread ", thread_id);
    auto before = [](const EventRecord* a, const EventRecord* b) { return Before(*a, *b); };
    if (!IsSorted(events, split_line_events, before)) Sort(&events, split_line_events, before);
    const uint64_t line_start =
        in_order != nullptr ? in_order->events.front().start_ticks : events.front()->start_ticks;
    const size_t count = in_order != nullptr ? in_order->events.size() : events.size();
    // Line times are relative to the capture start (the "Task Environment"
    // plane holds the epoch start), as TSL writes them: xprof turns them
    // into int64 picoseconds, which epoch nanoseconds would overflow.
    auto* line =
        plane.AddLine(thread_id, line_name, capture.clock.ToEpochNs(line_start) - base_epoch_ns);
    // Streamed, the line holds one chunk at a time.
    if (!output->streams()) line->mutable_events()->Reserve(static_cast<int>(count));
    uint64_t line_end = line_start;
    const LineWriter writer{line_start, ns_per_tick};
    if (in_order != nullptr) {
      for (const EventRecord& record : in_order->events) {
        writer.Add(record, &plane_stats, &plane, line, &args, &line_end);
        output->EventAdded(line);
      }
    } else if (output->streams() || events.size() < std::max<size_t>(split_line_events, 2)) {
      for (const EventRecord* record : events) {
        writer.Add(*record, &plane_stats, &plane, line, &args, &line_end);
        output->EventAdded(line);
      }
    } else {
      AddInTwoHalves(writer, events, &plane_stats, &plane, line, &line_end);
    }
    line->set_duration_ps(TicksToPs(line_start, line_end, ns_per_tick));
    output->LineDone(proto);
    stats->events += static_cast<int64_t>(count);
    stats->threads += 1;
  }
  const ServingLines serving{&plane, output, &plane_stats, &capture.clock, base_epoch_ns};
  stats->events += serving.AddAsyncLines(&spans);
  stats->events += serving.AddCounterLine(&counters);
  // c10d Work spans in a form xprof's framework_op_stats splits by
  // collective (src/xplane/collective_name.h).
  xplane::NameCollectivesForXprof(proto);

  stats->dropped += static_cast<int64_t>(capture.dropped);
  if (capture.dropped > 0) {
    plane.AddPlaneStat(xplane::kDroppedEventsStat, static_cast<int64_t>(capture.dropped));
  }
}

}  // namespace

void AddHostPlane(const core::RecordedCapture& capture, tensorflow::profiler::XSpace* space,
                  CollectStats* stats, const std::string& buffer_advice, size_t split_line_events) {
  // Lines are relative to the profile start of the whole capture (the
  // Task Environment plane, set by the session before collecting), which
  // other collectors' planes share; the recorder itself starts a little
  // later (its buffer is committed first).
  int64_t base_epoch_ns = xplane::ProfileStartEpochNs(*space);
  if (base_epoch_ns == 0) base_epoch_ns = capture.start_epoch_ns;
  LineOutput kept(nullptr);
  BuildHostPlane(capture, base_epoch_ns, xplane::FindOrAddPlane(space, xplane::kHostPlaneName),
                 stats, &kept, split_line_events);
  AddHostWarnings(capture, space, buffer_advice);
}

// The plane StreamHostPlane adds after `space`'s planes: its id and name.
tensorflow::profiler::XPlane NewStreamedPlane(const tensorflow::profiler::XSpace& space) {
  tensorflow::profiler::XPlane plane;  // As FindOrAddPlane would add it.
  plane.set_id(space.planes_size());
  plane.set_name(xplane::kHostPlaneName);
  return plane;
}

int64_t StreamBaseEpochNs(const core::RecordedCapture& capture,
                          const tensorflow::profiler::XSpace& space) {
  const int64_t base_epoch_ns = xplane::ProfileStartEpochNs(space);
  return base_epoch_ns != 0 ? base_epoch_ns : capture.start_epoch_ns;
}

absl::Status StreamHostPlane(const core::RecordedCapture& capture,
                             const tensorflow::profiler::XSpace& space, xplane::XPlaneSink* sink,
                             CollectStats* stats, tensorflow::profiler::XPlane* built) {
  tensorflow::profiler::XPlane plane = NewStreamedPlane(space);
  LineOutput streamed(sink);
  BuildHostPlane(capture, StreamBaseEpochNs(capture, space), &plane, stats, &streamed);
  absl::Status status = streamed.PlaneDone(plane);
  if (built != nullptr) *built = std::move(plane);
  return status;
}

absl::Status FragmentHostPlane(const core::RecordedCapture& capture,
                               const tensorflow::profiler::XSpace& space,
                               const tensorflow::profiler::XPlane& built,
                               tensorflow::profiler::XPlane* fragment, int max_events,
                               const std::function<absl::Status()>& ready) {
  *fragment = built;
  fragment->clear_lines();
  // Built again alike, for its events: the metadata `built` already has.
  tensorflow::profiler::XPlane plane = NewStreamedPlane(space);
  LineOutput cut(fragment, std::max(max_events, 1), &ready);
  CollectStats counted_before;  // `built`'s writer counted the events.
  BuildHostPlane(capture, StreamBaseEpochNs(capture, space), &plane, &counted_before, &cut);
  return cut.PlaneDone(plane);
}

void AddHostWarnings(const core::RecordedCapture& capture, tensorflow::profiler::XSpace* space,
                     const std::string& buffer_advice) {
  if (capture.dropped > 0) {
    space->add_warnings(absl::StrCat("neuronprof: ", capture.dropped,
                                     " host events were dropped because the event buffer (",
                                     capture.buffer_bytes, " bytes) was full; ", buffer_advice));
  }
  // Counted apart from the drops: no buffer size would have kept these.
  if (capture.too_large > 0) {
    space->add_warnings(absl::StrCat(
        "neuronprof: ", capture.too_large,
        " host markers were too large to record and were left out: the "
        "largest took ",
        capture.largest_too_large, " bytes (name plus arguments, encoded), above the limit of ",
        core::kBlockBytes,
        " bytes per marker; shorten its name or string "
        "arguments"));
  }
}

void SortSnapshotRecords(core::RecordedCapture* snapshot) {
  if (snapshot->copy == nullptr) return;  // Not a snapshot: the pool is read only.
  for (core::ThreadEvents& thread : snapshot->threads) {
    if (thread.events.empty()) continue;
    // A snapshot copies each thread's records into one run of the copy.
    auto* first = const_cast<EventRecord*>(&thread.events.front());
    EventRecord* last = first;
    bool markers_only = true;
    for (const EventRecord& record : thread.events) {
      const RecordKind kind = KindOf(record);
      markers_only =
          &record == last++ && kind != RecordKind::kCounter && kind != RecordKind::kAsync;
      if (!markers_only) break;
    }
    if (markers_only && !std::is_sorted(first, last, Before)) std::sort(first, last, Before);
  }
}

core::RecordedCapture TakeHostRecords(Collector* host_collector,
                                      tensorflow::profiler::XSpace* space) {
  return static_cast<HostCollector*>(host_collector)->TakeRecords(space);
}

std::unique_ptr<Collector> CreateHostCollector(const CollectorOptions& options) {
  return std::make_unique<HostCollector>(options);
}

}  // namespace collectors
}  // namespace neuronprof
