#include "src/analysis/ops/device_attribution.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/xplane/absl_view.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

// The device type a plane belongs to, so that two plug-ins' correlation ids
// never meet: "/device:GPU:0" and "/host:CPU-GPU-runtime" -> "GPU",
// "/device:CUSTOM:NPU:1" and "/host:CPU-NPU-runtime" -> "NPU"; "" for other
// host planes (TSL merges launches into the "/host:CPU" thread lines).
std::string DeviceTypeOf(std::string_view plane_name) {
  absl::string_view name = xplane::AbslView(plane_name);
  if (absl::ConsumePrefix(&name, xplane::kCustomDevicePlanePrefix) ||
      absl::ConsumePrefix(&name, xplane::kDevicePlanePrefix)) {
    return std::string(name.substr(0, name.find(':')));
  }
  const std::string host_prefix = std::string(xplane::kHostPlaneName) + "-";
  if (absl::ConsumePrefix(&name, host_prefix) &&
      absl::ConsumeSuffix(&name, xplane::kRuntimePlaneSuffix)) {
    return std::string(name);
  }
  return "";
}

// Op indices in start order, and the last of them starting at or before
// an instant (-1: none): the lookups below share them.
template <typename Spans>
void SortByStart(std::vector<int>& list, const Spans& spans) {
  std::stable_sort(list.begin(), list.end(),
                   [&](int a, int b) { return spans[a].start_ps < spans[b].start_ps; });
}
template <typename Spans>
int LastStartingBy(const std::vector<int>& list, const Spans& spans, int64_t time_ps) {
  auto after = std::upper_bound(list.begin(), list.end(), time_ps,
                                [&](int64_t t, int i) { return t < spans[i].start_ps; });
  return after == list.begin() ? -1 : *(after - 1);
}

// A nested interval on a thread: an operator or a user marker.
struct NestedSpan {
  int64_t start_ps = 0, duration_ps = 0;
  int parent = -1;     // the enclosing span on its line
  int host_span = -1;  // markers: the index into HostSpans::spans
  std::string_view name;
};

// Spans by thread (line id), in start order, to find the innermost one
// around an instant.
class SpansByThread {
 public:
  SpansByThread() = default;
  void Add(int64_t thread, NestedSpan span) {
    threads_[thread].push_back(static_cast<int>(spans_.size()));
    spans_.push_back(span);
  }
  void Sort() {
    for (auto& [thread, list] : threads_) SortByStart(list, spans_);
  }
  const NestedSpan& span(int i) const { return spans_[i]; }
  int size() const { return static_cast<int>(spans_.size()); }

  // For each (thread, time) query, the innermost span on that thread
  // running at that time, else -1; answers in the queries' order. The span
  // starting last before the instant either holds it or is nested in the
  // one that does: its enclosing spans are its parents, whose ends never
  // fall going up. Queries are answered per thread in time order, so a span
  // that ended before one query has ended before all later ones and the
  // walk skips it for good (path compression, as in union-find: amortized
  // near O(1) per query instead of O(depth)).
  std::vector<int> Innermost(const std::vector<std::pair<int64_t, int64_t>>& queries) const {
    std::vector<int> order(queries.size());
    for (size_t q = 0; q < order.size(); ++q) order[q] = static_cast<int>(q);
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return queries[a] < queries[b]; });
    std::vector<int> alive(spans_.size());  // alive[i] == i: not known to have ended
    for (size_t i = 0; i < alive.size(); ++i) alive[i] = static_cast<int>(i);
    std::vector<int> answers(queries.size(), -1);
    for (const int q : order) {
      const auto [thread, time_ps] = queries[q];
      auto it = threads_.find(thread);
      if (it == threads_.end()) continue;
      const int first = LastStartingBy(it->second, spans_, time_ps);
      int found = first;
      while (found >= 0) {
        xplane::CountWork();
        if (alive[found] != found) {
          found = alive[found];
        } else if (SaturatingAdd(spans_[found].start_ps, spans_[found].duration_ps) < time_ps) {
          found = spans_[found].parent;
        } else {
          break;
        }
      }
      for (int i = first; i >= 0 && i != found;) {  // every span passed has ended
        const int up = alive[i] != i ? alive[i] : spans_[i].parent;
        alive[i] = found;
        i = up;
      }
      answers[q] = found;
    }
    return answers;
  }

 private:
  std::vector<NestedSpan> spans_;
  absl::flat_hash_map<int64_t, std::vector<int>> threads_;
};

// Operators by thread; span i is op i.
SpansByThread OpsByThread(const XSpace& space, const OperatorEvents& ops) {
  SpansByThread threads;
  for (const OperatorEvent& op : ops.ops) {
    threads.Add(space.planes(op.plane).lines(op.line).id(),
                {op.start_ps, op.duration_ps, op.parent, -1, op.name});
  }
  threads.Sort();
  return threads;
}

// User markers by thread (HostSpans' kMarker spans); a marker's parent is
// its innermost enclosing marker.
SpansByThread MarkersByThread(const HostSpans& host) {
  SpansByThread threads;
  std::vector<int> index(host.spans.size(), -1);  // host span -> marker span
  for (size_t i = 0; i < host.spans.size(); ++i) {
    const HostSpan& span = host.spans[i];
    if (span.kind != SpanKind::kMarker) continue;
    int parent = span.parent;  // parents come first, so theirs are set
    while (parent >= 0 && host.spans[parent].kind != SpanKind::kMarker) {
      parent = host.spans[parent].parent;
    }
    index[i] = threads.size();
    threads.Add(host.thread_ids[span.thread],
                {span.start_ps, span.duration_ps, parent < 0 ? -1 : index[parent],
                 static_cast<int>(i), span.name});
  }
  threads.Sort();
  return threads;
}

// A runtime call with a correlation id: its op (around its start, as TSL
// attributes) and where it ran: its thread and its middle, which clock
// rounding between a marker and the runtime's own reading of the same
// instant cannot move out of the marker around the call.
struct Launch {
  int op = -1;
  int64_t thread = -1, middle_ps = -1;
};

// (device type, id): types are short (SSO), so keys do not allocate.
using CorrelationKey = std::pair<std::string, int64_t>;
using Launches = absl::flat_hash_map<CorrelationKey, Launch>;

// Every runtime call with a correlation id on a host plane -> its op.
Launches LaunchingOps(const XSpace& space, const SpansByThread& threads) {
  std::vector<CorrelationKey> keys;
  std::vector<std::pair<int64_t, int64_t>> calls, starts;  // (thread, middle / start)
  for (const XPlane& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    const xplane::PlaneVisitor plane(raw);
    const int64_t correlation_id = plane.StatId(xplane::kCorrelationIdStat);
    if (correlation_id < 0) continue;
    const std::string type = DeviceTypeOf(plane.Name());
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      const int64_t line_ps = LineStartPs(line.TimestampNs());
      line.ForEachEvent([&](const xplane::EventVisitor& call) {
        const std::optional<int64_t> id = call.IntStat(correlation_id);
        if (!id || *id == 0) return;
        const int64_t start = SaturatingAdd(line_ps, call.OffsetPs());
        const int64_t middle = SaturatingAdd(start, std::max<int64_t>(call.DurationPs(), 0) / 2);
        keys.push_back({type, *id});
        calls.push_back({line.Id(), middle});
        starts.push_back({line.Id(), start});
      });
    });
  }
  // Applied in file order: a repeated id keeps its last call.
  const std::vector<int> op = threads.Innermost(starts);
  Launches launches;
  for (size_t k = 0; k < keys.size(); ++k) {
    launches[std::move(keys[k])] = {op[k], calls[k].first, calls[k].second};
  }
  return launches;
}

// Ops by name and by tf_op value, each list in start order, for device
// events that name their framework op instead of a correlation id.
class OpsByName {
 public:
  explicit OpsByName(const OperatorEvents& ops) : ops_(ops.ops) {}

  // The latest call of `name` starting at or before `time_ps`, else -1.
  int LatestBefore(std::string_view name, int64_t time_ps) {
    if (by_name_.empty()) Build();
    auto it = by_name_.find(name);
    return it == by_name_.end() ? -1 : LastStartingBy(it->second, ops_, time_ps);
  }

 private:
  void Build() {
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      by_name_[std::string(ops_[i].name)].push_back(i);
      by_name_[TfOpValue(ops_[i].scope, ops_[i].name)].push_back(i);
    }
    for (auto& [name, list] : by_name_) SortByStart(list, ops_);
  }

  const OperatorEventList& ops_;
  std::map<std::string, std::vector<int>, std::less<>> by_name_;
};

// Device-plane stats read per event, resolved once per plane.
struct DeviceStatIds {
  explicit DeviceStatIds(const xplane::PlaneVisitor& plane)
      : correlation(plane.StatId(xplane::kCorrelationIdStat)),
        tf_op(plane.StatId(xplane::kTfOpStat)),
        bytes(plane.StatId(xplane::kBytesStat)),
        kernel_details(plane.StatId(xplane::kKernelDetailsStat)),
        achieved_occupancy(plane.StatId(xplane::kEstAchievedOccupancyStat)),
        flops(plane.StatId(xplane::kFlopsStat)) {}
  int64_t correlation, tf_op, bytes, kernel_details, achieved_occupancy, flops;
};

DeviceOpEvent ReadDeviceEvent(const xplane::PlaneVisitor& plane, const DeviceStatIds& ids,
                              const xplane::EventVisitor& event, int plane_index, int64_t line_ps) {
  DeviceOpEvent device;
  device.plane = plane_index;
  device.name = event.Name();
  device.kind = DeviceEventKind(plane, event);
  device.start_ps = SaturatingAdd(line_ps, event.OffsetPs());
  device.duration_ps = std::max<int64_t>(event.DurationPs(), 0);
  device.bytes = event.IntStat(ids.bytes).value_or(-1);
  device.details = event.StrStat(ids.kernel_details).value_or("");
  device.flops = event.IntStat(ids.flops).value_or(-1);
  if (const auto occupancy = event.Stat(ids.achieved_occupancy)) {
    const auto& raw = occupancy->raw();
    if (raw.value_case() == tensorflow::profiler::XStat::kDoubleValue &&
        std::isfinite(raw.double_value())) {
      device.achieved_occupancy_pct = raw.double_value();
    }
  }
  return device;
}

// The launch by correlation id (this device type's runtime first, then
// launches on plain host planes) and its op, else the op named by the
// framework-op stat, launched in its middle on its thread.
void Attribute(const XSpace& space, const OperatorEvents& ops, const xplane::EventVisitor& event,
               const DeviceStatIds& ids, const std::string& type, const Launches& launches,
               OpsByName& names, DeviceOpEvent& device) {
  if (const auto id = event.IntStat(ids.correlation); id && *id != 0) {
    auto launch = launches.find({type, *id});
    if (launch == launches.end()) launch = launches.find({"", *id});
    if (launch != launches.end()) {
      device.launch_thread = launch->second.thread;
      device.launch_ps = launch->second.middle_ps;
      device.op = launch->second.op;
      if (device.op >= 0) {
        device.attribution = Attribution::kCorrelation;
        return;
      }
    }
  }
  const auto op_name = event.StrStat(ids.tf_op);
  if (!op_name || op_name->empty()) return;
  device.op = names.LatestBefore(*op_name, device.start_ps);
  if (device.op < 0) return;
  device.attribution = Attribution::kFrameworkOp;
  if (device.launch_ps >= 0) return;
  const OperatorEvent& op = ops.ops[device.op];
  device.launch_thread = space.planes(op.plane).lines(op.line).id();
  device.launch_ps = SaturatingAdd(op.start_ps, op.duration_ps / 2);
}

}  // namespace

std::string DeviceEventKind(const xplane::PlaneVisitor& plane, const xplane::EventVisitor& event) {
  if (const auto kind = event.Stat(plane.StatId(xplane::kDeviceEventKindStat))) {
    std::string scratch;
    const std::string_view text = kind->TextValue(&scratch);
    if (!text.empty()) return std::string(text);
  }
  if (event.Stat(plane.StatId(xplane::kKernelDetailsStat))) return "kernel";
  if (event.Stat(plane.StatId(xplane::kMemcpyDetailsStat))) return "memcpy";
  if (event.Stat(plane.StatId(xplane::kMemsetDetailsStat))) return "memset";
  return "other";
}

// Each device event to the innermost user marker around its launch.
void AttributeToMarkers(const SpansByThread& markers, DeviceEvents& result) {
  std::vector<std::pair<int64_t, int64_t>> launches;  // (thread, time)
  std::vector<size_t> launched;                       // their events
  for (size_t e = 0; e < result.events.size(); ++e) {
    const DeviceOpEvent& device = result.events[e];
    if (device.launch_ps < 0) continue;
    launches.push_back({device.launch_thread, device.launch_ps});
    launched.push_back(e);
  }
  const std::vector<int> marker = markers.Innermost(launches);
  for (size_t l = 0; l < launched.size(); ++l) {
    if (marker[l] < 0) continue;
    DeviceOpEvent& device = result.events[launched[l]];
    device.marker = markers.span(marker[l]).host_span;
    device.marker_name = markers.span(marker[l]).name;
  }
  for (const DeviceOpEvent& device : result.events) {
    if (device.marker >= 0) ++result.to_marker;
    if (device.marker < 0 && device.op < 0) ++result.to_neither;
  }
}

DeviceEvents CollectDeviceEvents(const XSpace& space, const OperatorEvents& ops,
                                 const HostSpans* spans) {
  DeviceEvents result;
  std::optional<HostSpans> own_spans;
  const SpansByThread threads = OpsByThread(space, ops);
  const Launches launches = LaunchingOps(space, threads);
  std::optional<SpansByThread> markers;  // built when a device plane needs it
  OpsByName names(ops);
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsDevicePlane(space.planes(p))) continue;
    if (!markers) {
      if (spans == nullptr) spans = &own_spans.emplace(CollectHostSpans(space));
      markers = MarkersByThread(*spans);
    }
    result.planes.push_back(p);
    const xplane::PlaneVisitor plane(space.planes(p));
    const DeviceStatIds ids(plane);
    const std::string type = DeviceTypeOf(plane.Name());
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      const int64_t line_ps = LineStartPs(line.TimestampNs());
      line.ForEachEvent([&](const xplane::EventVisitor& event) {
        DeviceOpEvent device = ReadDeviceEvent(plane, ids, event, p, line_ps);
        Attribute(space, ops, event, ids, type, launches, names, device);
        switch (device.attribution) {
          case Attribution::kCorrelation:
            ++result.by_correlation;
            break;
          case Attribution::kFrameworkOp:
            ++result.by_framework_op;
            break;
          case Attribution::kNone:
            ++result.unattributed;
            break;
        }
        if (device.flops > 0)
          result.reported_flops = SaturatingAdd(result.reported_flops, device.flops);
        result.events.push_back(std::move(device));
      });
    });
  }
  if (markers) AttributeToMarkers(*markers, result);
  return result;
}

}  // namespace analysis
}  // namespace neuronprof
