#include "src/analysis/markers/marker_stats.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <tuple>
#include <utility>

#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

// (name, source, thread group index): views into the XSpace and HostSpans.
using Key = std::tuple<std::string_view, std::string_view, int>;

// Device work launched from one span, or from the spans of one row.
struct DeviceSum {
  int64_t ps = 0, events = 0, flops = 0;
  void Add(int64_t more_ps, int64_t more_events, int64_t more_flops) {
    ps = SaturatingAdd(ps, more_ps);
    events += more_events;
    flops = SaturatingAdd(flops, more_flops);
  }
};

struct Group {
  std::vector<int64_t> durations;
  int64_t self_ps = 0;
  DeviceSum device;
};

std::vector<SpanStats> ToRows(std::map<Key, Group>& groups,
                              const std::vector<std::string>& labels) {
  std::vector<SpanStats> rows;
  rows.reserve(groups.size());
  for (auto& [key, group] : groups) {
    SpanStats row;
    row.name = std::string(std::get<0>(key));
    row.source = std::string(std::get<1>(key));
    row.thread = labels[std::get<2>(key)];
    row.duration = Summarize(group.durations);
    row.self_ps = group.self_ps;
    row.device_ps = group.device.ps;
    row.device_events = group.device.events;
    row.device_flops = group.device.flops;
    rows.push_back(std::move(row));
  }
  // The map's order breaks ties, so equal totals keep name order.
  std::stable_sort(rows.begin(), rows.end(), [](const SpanStats& a, const SpanStats& b) {
    return a.total_ps() > b.total_ps();
  });
  return rows;
}

}  // namespace

std::string ThreadGroup(std::string_view thread) {
  std::string group;
  for (size_t i = 0; i < thread.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(thread[i]))) {
      group.push_back(thread[i]);
    } else if (i == 0 || !std::isdigit(static_cast<unsigned char>(thread[i - 1]))) {
      group.push_back('*');
    }
  }
  return group;
}

MarkerStats BuildMarkerStats(const HostSpans& spans, GroupBy group_by, const DeviceEvents* device) {
  // Device work per launching span.
  std::vector<DeviceSum> launched(device != nullptr ? spans.spans.size() : 0);
  if (device != nullptr) {
    for (const DeviceOpEvent& event : device->events) {
      if (event.marker < 0 || event.marker >= static_cast<int>(launched.size())) continue;
      launched[event.marker].Add(event.duration_ps, 1, std::max<int64_t>(event.flops, 0));
    }
  }
  // Each thread's row label, numbered once: labels[group_of[thread]].
  std::vector<std::string> labels = {""};
  std::vector<int> group_of(spans.threads.size(), 0);
  if (group_by != GroupBy::kName) {
    std::map<std::string, int> numbers;
    for (size_t t = 0; t < spans.threads.size(); ++t) {
      std::string label =
          group_by == GroupBy::kThread ? spans.threads[t] : ThreadGroup(spans.threads[t]);
      auto [it, added] = numbers.try_emplace(label, static_cast<int>(labels.size()));
      if (added) labels.push_back(std::move(label));
      group_of[t] = it->second;
    }
  }
  std::map<Key, Group> markers, steps, async;
  for (const HostSpan& span : spans.spans) {
    // Operators are the op table's; runtime calls are not the user's.
    if (span.kind == SpanKind::kOperator || span.kind == SpanKind::kRuntimeCall) continue;
    if (span.kind == SpanKind::kAsync) {  // keyed by the track, in the source slot
      Group& group = async[Key{span.name, spans.threads[span.thread], 0}];
      group.durations.push_back(span.duration_ps);
      group.self_ps = SaturatingAdd(group.self_ps, span.self_ps);
      continue;
    }
    const bool step = span.kind == SpanKind::kStep;
    const std::string_view source =
        step || span.source < 0 ? std::string_view() : spans.sources[span.source];
    Group& group = (step ? steps : markers)[Key{span.name, source, group_of[span.thread]}];
    group.durations.push_back(span.duration_ps);
    group.self_ps = SaturatingAdd(group.self_ps, span.self_ps);
    if (!launched.empty()) {
      const DeviceSum& sum = launched[&span - spans.spans.data()];
      group.device.Add(sum.ps, sum.events, sum.flops);
    }
  }
  std::vector<SpanStats> async_rows = ToRows(async, labels);
  for (SpanStats& row : async_rows) row.thread = std::exchange(row.source, {});
  return MarkerStats{ToRows(markers, labels), ToRows(steps, labels), std::move(async_rows)};
}

}  // namespace analysis
}  // namespace neuronprof
