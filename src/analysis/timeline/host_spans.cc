#include "src/analysis/timeline/host_spans.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/xplane/host_events.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XSpace;

// The spans of one line, appended to `out`; `sources` interns source texts.
// The stats CollectLine reads besides the step's.
struct SpanStatIds {
  explicit SpanStatIds(const xplane::PlaneVisitor& plane)
      : source(plane.StatId(xplane::kSourceStat)),
        produced(plane.StatId(xplane::kProducerIdStat)),
        consumed(plane.StatId(xplane::kConsumerIdStat)),
        async(plane.StatId(xplane::kAsyncIdStat)),
        instant(plane.StatId(xplane::kInstantStat)),
        correlation(plane.StatId(xplane::kCorrelationIdStat)) {}
  int64_t source, produced, consumed, async, instant, correlation;
};

bool IsInstant(const xplane::EventVisitor& event, int64_t instant_id) {
  const tensorflow::profiler::XEventMetadata* metadata = event.Metadata();
  if (metadata == nullptr || instant_id < 0) return false;
  return std::any_of(metadata->stats().begin(), metadata->stats().end(),
                     [&](const auto& stat) { return stat.metadata_id() == instant_id; });
}

uint64_t ContextOf(const xplane::EventVisitor& event, const SpanStatIds& stats) {
  for (const int64_t id : {stats.produced, stats.consumed, stats.async}) {
    if (const auto value = event.IntStat(id)) return static_cast<uint64_t>(*value);
  }
  return 0;
}

// Leaves in `open` the spans that have not ended at `start_ps`.
void PopEnded(int64_t start_ps, const HostSpans& out, std::vector<int32_t>& open) {
  while (!open.empty()) {
    const HostSpan& top = out.spans[open.back()];
    if (start_ps < SaturatingAdd(top.start_ps, top.duration_ps)) break;
    open.pop_back();
  }
}

// Each short source's index in HostSpans::sources, looked up once per
// stat: a call site's source is one metadata stat that its events share.
class SourceIndex {
 public:
  int Of(const xplane::StatVisitor& stat, std::string* scratch) {
    auto [known, added] = by_stat_.try_emplace(&stat.raw(), 0);
    if (added) {
      const std::string_view site = ShortSource(stat.TextValue(scratch));
      known->second =
          by_text_.try_emplace(std::string(site), static_cast<int>(by_text_.size())).first->second;
    }
    return known->second;
  }
  std::vector<std::string> Texts() const {
    std::vector<std::string> texts(by_text_.size());
    for (const auto& [text, index] : by_text_) texts[index] = text;
    return texts;
  }

 private:
  absl::flat_hash_map<const tensorflow::profiler::XStat*, int> by_stat_;
  absl::flat_hash_map<std::string, int> by_text_;
};

// `runtime`: the line of a runtime plane.
void CollectLine(const xplane::LineVisitor& line, const xplane::StepStatIds& ids,
                 const SpanStatIds& stats, bool runtime, int thread, SourceIndex& sources,
                 HostSpans& out) {
  const int64_t line_ps = LineStartPs(line.TimestampNs());
  std::vector<int32_t> open;  // the enclosing spans, innermost last
  std::string scratch;
  for (int e : xplane::SortedEventIndices(line.raw())) {
    const xplane::EventVisitor event = line.Event(e);
    if (xplane::IsMemoryEventName(event.Name())) continue;
    const int64_t start_ps = SaturatingAdd(line_ps, event.OffsetPs());
    if (IsInstant(event, stats.instant)) {
      const uint64_t context = ContextOf(event, stats);
      if (context == 0) continue;
      PopEnded(start_ps, out, open);
      if (!open.empty()) out.links.push_back({context, open.back(), &event.raw()});
      continue;
    }
    HostSpan span;
    span.name = event.DisplayName();  // a Work span's title (xplane/collective_name.h)
    span.kind = xplane::IsAsyncLineId(line.Id())           ? SpanKind::kAsync
                : event.Stat(ids.framework)                ? SpanKind::kOperator
                : xplane::IsStepEvent(event, ids)          ? SpanKind::kStep
                : runtime || event.Stat(stats.correlation) ? SpanKind::kRuntimeCall
                                                           : SpanKind::kMarker;
    span.thread = thread;
    span.start_ps = start_ps;
    span.duration_ps = std::max<int64_t>(0, event.DurationPs());
    span.self_ps = span.duration_ps;
    span.context = ContextOf(event, stats);
    span.event = &event.raw();
    if (const auto stat = event.Stat(stats.source)) span.source = sources.Of(*stat, &scratch);
    PopEnded(span.start_ps, out, open);
    if (!open.empty()) {
      HostSpan& parent = out.spans[open.back()];
      span.parent = open.back();
      const int64_t parent_end = SaturatingAdd(parent.start_ps, parent.duration_ps);
      const int64_t end = std::min(SaturatingAdd(span.start_ps, span.duration_ps), parent_end);
      parent.self_ps =
          std::max<int64_t>(0, SaturatingSub(parent.self_ps, SaturatingSub(end, span.start_ps)));
    }
    open.push_back(static_cast<int32_t>(out.spans.size()));
    out.spans.push_back(span);
  }
}

}  // namespace

std::string_view ShortSource(std::string_view source) {
  const size_t last = source.rfind('/');
  if (last == std::string_view::npos || last == 0) return source;
  const size_t before = source.rfind('/', last - 1);
  return before == std::string_view::npos ? source : source.substr(before + 1);
}

HostSpans CollectHostSpans(const XSpace& space) {
  HostSpans out;
  SourceIndex sources;
  for (const auto& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    const xplane::PlaneVisitor plane(raw);
    const xplane::StepStatIds ids(plane);
    const SpanStatIds stats(plane);
    const bool runtime = xplane::IsRuntimePlane(raw);
    out.spans.reserve(out.spans.size() + plane.NumEvents());
    for (int l = 0; l < plane.NumLines(); ++l) {
      const xplane::LineVisitor line = plane.Line(l);
      const std::string_view name = line.DisplayName();
      if (xplane::IsCounterLine(line.Name())) continue;
      out.threads.push_back(name.empty() ? absl::StrCat("thread ", line.Id()) : std::string(name));
      out.thread_ids.push_back(line.Id());
      CollectLine(line, ids, stats, runtime, static_cast<int>(out.threads.size() - 1), sources,
                  out);
    }
  }
  out.sources = sources.Texts();
  return out;
}

}  // namespace analysis
}  // namespace neuronprof
