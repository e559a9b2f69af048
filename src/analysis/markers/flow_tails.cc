#include "src/analysis/markers/flow_tails.h"

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "src/xplane/flow_links.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/work_count.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

int64_t EndPs(const HostSpan& span) { return SaturatingAdd(span.start_ps, span.duration_ps); }

constexpr size_t kMaxLinkedPerContext = 64;

// Markers linked to each context id, leaving out those nested in a marker
// linked to the same id.
absl::flat_hash_map<uint64_t, std::vector<int32_t>> LinkedMarkers(const HostSpans& spans) {
  absl::flat_hash_map<uint64_t, std::vector<int32_t>> out;
  // The spans are each line's nesting tree in pre-order: `open` holds the
  // current span's enclosing spans, and `open_contexts` how many of them
  // carry each id, so no span walks its parents (a file decides the depth).
  std::vector<int32_t> open;
  absl::flat_hash_map<uint64_t, int32_t> open_contexts;
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const HostSpan& span = spans.spans[i];
    xplane::CountWork();
    while (!open.empty() && open.back() != span.parent) {
      xplane::CountWork();
      const uint64_t context = spans.spans[open.back()].context;
      if (context != 0 && --open_contexts[context] == 0) open_contexts.erase(context);
      open.pop_back();
    }
    open.push_back(static_cast<int32_t>(i));
    if (span.context == 0) continue;
    const bool nested = open_contexts.contains(span.context);
    ++open_contexts[span.context];
    if (!nested && span.kind != SpanKind::kAsync)
      out[span.context].push_back(static_cast<int32_t>(i));
  }
  for (const SpanLink& link : spans.links) {  // a batch consumer's ids
    if (spans.spans[link.span].context != link.context) out[link.context].push_back(link.span);
  }
  return out;
}

}  // namespace

std::vector<FlowWait> CollectFlowWaits(const tensorflow::profiler::XSpace& space,
                                       const HostSpans& spans) {
  absl::flat_hash_map<const tensorflow::profiler::XEvent*, int32_t> index;
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    if (spans.spans[i].context != 0) index[spans.spans[i].event] = static_cast<int32_t>(i);
  }
  for (const SpanLink& link : spans.links) index[link.event] = link.span;
  std::vector<FlowWait> waits;
  absl::flat_hash_set<int32_t> seen;  // producers with their first consumer found
  for (const auto& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    // Ordered by consumer start: a producer's first link is its first consumer.
    for (const xplane::FlowLink& link : xplane::LinkFlows(xplane::PlaneVisitor(raw))) {
      const auto p = index.find(link.producer.event);
      const auto c = index.find(link.consumer.event);
      if (p == index.end() || c == index.end() || !seen.insert(p->second).second) {
        continue;
      }
      const HostSpan& producer = spans.spans[p->second];
      const HostSpan& consumer = spans.spans[c->second];
      if (consumer.start_ps <= EndPs(producer)) continue;
      waits.push_back({p->second, c->second, EndPs(producer), consumer.start_ps,
                       "wait " + std::string(producer.name) + "->" + std::string(consumer.name)});
    }
  }
  return waits;
}

std::vector<FlowWait> CollectDeviceWork(const DeviceEvents& device) {
  std::vector<FlowWait> out;
  for (const DeviceOpEvent& event : device.events) {
    if (event.marker < 0) continue;
    out.push_back({event.marker, -1, event.start_ps,
                   SaturatingAdd(event.start_ps, event.duration_ps), std::string()});
  }
  return out;
}

std::vector<TailReport> BuildAsyncTails(const HostSpans& spans, const std::vector<FlowWait>& waits,
                                        const std::vector<FlowWait>& device) {
  const auto linked = LinkedMarkers(spans);
  // Device work by the linked marker it was launched in (or nested in).
  absl::flat_hash_set<int32_t> is_linked;
  for (const auto& [context, markers] : linked) is_linked.insert(markers.begin(), markers.end());
  // Each span's innermost linked marker, itself included; -1: none (one
  // pass: parents come before their children).
  std::vector<int32_t> linked_up(spans.spans.size(), -1);
  xplane::CountWork(spans.spans.size());
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const int32_t parent = spans.spans[i].parent;
    linked_up[i] = is_linked.contains(static_cast<int32_t>(i)) ? static_cast<int32_t>(i)
                   : parent >= 0                               ? linked_up[parent]
                                                               : -1;
  }
  absl::flat_hash_map<int32_t, std::vector<const FlowWait*>> device_of;
  for (const FlowWait& work : device) {
    const int32_t m = work.producer >= 0 ? linked_up[work.producer] : -1;
    if (m >= 0) device_of[m].push_back(&work);
  }
  absl::flat_hash_map<uint64_t, std::vector<const FlowWait*>> waits_of;
  for (const FlowWait& wait : waits) {
    const uint64_t context = spans.spans[wait.producer].context;
    if (context != 0) waits_of[context].push_back(&wait);
  }
  std::map<std::pair<std::string_view, std::string_view>, std::vector<TailInstance>> by_key;
  for (const HostSpan& span : spans.spans) {
    if (span.kind != SpanKind::kAsync) continue;
    const int64_t lo = span.start_ps, hi = EndPs(span);
    TailInstance instance{span.duration_ps, {{kSelfPart, span.duration_ps}}};
    auto add = [&](std::string_view part, int64_t ps) {
      if (ps <= 0) return;
      instance.parts.emplace_back(part, ps);
      instance.parts.front().second = SaturatingSub(instance.parts.front().second, ps);
    };
    if (span.context != 0) {
      if (const auto it = linked.find(span.context); it != linked.end()) {
        for (const int32_t m : it->second) {
          const HostSpan& marker = spans.spans[m];
          add(marker.name, Overlap(marker.start_ps, EndPs(marker), lo, hi));
          const auto work = device_of.find(m);
          if (work == device_of.end()) continue;
          for (const FlowWait* w : work->second) {  // outside the marker, inside the span
            add(marker.name, Overlap(w->start_ps, w->end_ps, lo, hi) -
                                 Overlap(w->start_ps, w->end_ps, std::max(lo, marker.start_ps),
                                         std::min(hi, EndPs(marker))));
          }
        }
      }
      if (const auto it = waits_of.find(span.context); it != waits_of.end()) {
        for (const FlowWait* wait : it->second) {
          add(wait->part, Overlap(wait->start_ps, wait->end_ps, lo, hi));
        }
      }
    }
    by_key[{spans.threads[span.thread], span.name}].push_back(std::move(instance));
  }
  std::vector<TailReport> reports;
  for (auto& [key, instances] : by_key) {
    const auto& [track, name] = key;
    std::string label(name);
    if (track != name) label = std::string(track) + "/" + label;
    reports.push_back(ExplainTail(std::move(label), "async", std::move(instances)));
  }
  std::stable_sort(reports.begin(), reports.end(),
                   [](const TailReport& a, const TailReport& b) { return a.name < b.name; });
  return reports;
}

std::vector<FlowWait> CollectLinkedMarkers(const HostSpans& spans) {
  const auto linked = LinkedMarkers(spans);
  std::vector<FlowWait> out;
  auto add = [&](int32_t anchor, uint64_t context) {
    const auto it = linked.find(context);
    if (it == linked.end()) return;
    // A reused id links everything to everything: its first markers only.
    const size_t n = std::min<size_t>(it->second.size(), kMaxLinkedPerContext);
    for (size_t k = 0; k < n; ++k) {
      const int32_t m = it->second[k];
      const HostSpan& marker = spans.spans[m];
      if (marker.thread == spans.spans[anchor].thread) continue;
      out.push_back({anchor, m, marker.start_ps, EndPs(marker), std::string(marker.name)});
    }
  };
  for (size_t i = 0; i < spans.spans.size(); ++i) {
    const HostSpan& span = spans.spans[i];
    if (span.context != 0 && span.kind != SpanKind::kAsync)
      add(static_cast<int32_t>(i), span.context);
  }
  for (const SpanLink& link : spans.links) add(link.span, link.context);
  return out;
}

std::vector<TailReport> BuildTails(const tensorflow::profiler::XSpace& space,
                                   const HostSpans& spans, const DeviceEvents* device) {
  const std::vector<FlowWait> waits = CollectFlowWaits(space, spans);
  const std::vector<FlowWait> work = device ? CollectDeviceWork(*device) : std::vector<FlowWait>();
  std::vector<TailReport> reports = BuildStepTails(spans, waits, CollectLinkedMarkers(spans), work);
  std::vector<TailReport> async = BuildAsyncTails(spans, waits, work);
  reports.insert(reports.end(), std::make_move_iterator(async.begin()),
                 std::make_move_iterator(async.end()));
  return reports;
}

}  // namespace analysis
}  // namespace neuronprof
