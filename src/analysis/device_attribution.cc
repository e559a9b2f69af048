#include "src/analysis/device_attribution.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "src/analysis/operator_annotator.h"
#include "src/analysis/saturating.h"
#include "src/xplane/names.h"
#include "src/xplane/work_count.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

// The device type a plane belongs to, so that two plug-ins' correlation ids
// never meet: "/device:GPU:0" and "/host:CPU-GPU-runtime" -> "GPU",
// "/device:CUSTOM:NPU:1" and "/host:CPU-NPU-runtime" -> "NPU"; "" for other
// host planes (TSL merges launches into the "/host:CPU" thread lines).
std::string DeviceTypeOf(std::string_view plane_name) {
  absl::string_view name = Absl(plane_name);
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
// an instant (-1: none): the two lookups below share them.
void SortByStart(std::vector<int>& list, const std::vector<OperatorEvent>& ops) {
  std::stable_sort(list.begin(), list.end(),
                   [&](int a, int b) { return ops[a].start_ps < ops[b].start_ps; });
}
int LastStartingBy(const std::vector<int>& list, const std::vector<OperatorEvent>& ops,
                   int64_t time_ps) {
  auto after = std::upper_bound(list.begin(), list.end(), time_ps,
                                [&](int64_t t, int i) { return t < ops[i].start_ps; });
  return after == list.begin() ? -1 : *(after - 1);
}

// Operators by thread (line id), in start order, to find the innermost one
// around each runtime call.
class OpsByThread {
 public:
  OpsByThread(const XSpace& space, const OperatorEvents& ops)
      : ops_(ops.ops), alive_(ops.ops.size()) {
    for (int i = 0; i < static_cast<int>(ops_.size()); ++i) {
      const OperatorEvent& op = ops_[i];
      threads_[space.planes(op.plane).lines(op.line).id()].push_back(i);
      alive_[i] = i;
    }
    for (auto& [thread, list] : threads_) SortByStart(list, ops_);
  }

  // The innermost op on `thread` running at `time_ps`, else -1. The op
  // starting last before the instant either holds it or is nested in the
  // one that does: its enclosing ops are its parents, whose ends never
  // fall going up. Instants must come in non-decreasing order per thread:
  // an op that ended before one instant has ended before all later ones,
  // so the walk up skips it for good (path compression, as in union-find:
  // amortized near O(1) instead of O(depth) per instant).
  int Innermost(int64_t thread, int64_t time_ps) {
    auto it = threads_.find(thread);
    if (it == threads_.end()) return -1;
    return Alive(LastStartingBy(it->second, ops_, time_ps), time_ps);
  }

 private:
  // The first of `op` and its parents that ends at or after `time_ps`.
  int Alive(int op, int64_t time_ps) {
    int found = op;
    while (found >= 0) {
      xplane::CountWork();
      if (alive_[found] != found) {
        found = alive_[found];
      } else if (SaturatingAdd(ops_[found].start_ps, ops_[found].duration_ps) < time_ps) {
        found = ops_[found].parent;
      } else {
        break;
      }
    }
    // Every op passed has ended: point each straight at the answer.
    while (op >= 0 && op != found) {
      const int up = alive_[op] != op ? alive_[op] : ops_[op].parent;
      alive_[op] = found;
      op = up;
    }
    return found;
  }

  const std::vector<OperatorEvent>& ops_;
  absl::flat_hash_map<int64_t, std::vector<int>> threads_;
  // alive_[i] == i: not known to have ended; else where its walk goes on.
  std::vector<int> alive_;
};

// (device type, id): types are short (SSO), so keys do not allocate.
using CorrelationKey = std::pair<std::string, int64_t>;
using Launches = absl::flat_hash_map<CorrelationKey, int>;

// Every runtime call with a correlation id on a host plane -> its op. Calls
// are looked up per thread in time order (OpsByThread::Innermost), and the
// answers applied in file order, so a repeated id keeps its last call.
Launches LaunchingOps(const XSpace& space, OpsByThread& threads) {
  struct Call {
    int64_t thread, start_ps;
    size_t key;  // into keys
  };
  std::vector<Call> calls;
  std::vector<CorrelationKey> keys;
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
        calls.push_back({line.Id(), SaturatingAdd(line_ps, call.OffsetPs()), keys.size()});
        keys.push_back({type, *id});
      });
    });
  }
  std::vector<int> op(keys.size(), -1);
  std::stable_sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) {
    return a.thread != b.thread ? a.thread < b.thread : a.start_ps < b.start_ps;
  });
  for (const Call& call : calls) op[call.key] = threads.Innermost(call.thread, call.start_ps);
  Launches launches;
  for (size_t k = 0; k < keys.size(); ++k) launches[std::move(keys[k])] = op[k];
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

  const std::vector<OperatorEvent>& ops_;
  std::map<std::string, std::vector<int>, std::less<>> by_name_;
};

// Device-plane stats read per event, resolved once per plane.
struct DeviceStatIds {
  explicit DeviceStatIds(const xplane::PlaneVisitor& plane)
      : correlation(plane.StatId(xplane::kCorrelationIdStat)),
        tf_op(plane.StatId(xplane::kTfOpStat)),
        bytes(plane.StatId(xplane::kBytesStat)),
        kernel_details(plane.StatId(xplane::kKernelDetailsStat)),
        achieved_occupancy(plane.StatId(xplane::kEstAchievedOccupancyStat)) {}
  int64_t correlation, tf_op, bytes, kernel_details, achieved_occupancy;
};

DeviceOpEvent ReadDeviceEvent(const xplane::PlaneVisitor& plane, const DeviceStatIds& ids,
                              const xplane::EventVisitor& event, int plane_index,
                              int64_t line_ps) {
  DeviceOpEvent device;
  device.plane = plane_index;
  device.name = event.Name();
  device.kind = DeviceEventKind(plane, event);
  device.start_ps = SaturatingAdd(line_ps, event.OffsetPs());
  device.duration_ps = std::max<int64_t>(event.DurationPs(), 0);
  device.bytes = event.IntStat(ids.bytes).value_or(-1);
  device.details = event.StrStat(ids.kernel_details).value_or("");
  if (const auto occupancy = event.Stat(ids.achieved_occupancy)) {
    const auto& raw = occupancy->raw();
    if (raw.value_case() == tensorflow::profiler::XStat::kDoubleValue &&
        std::isfinite(raw.double_value())) {
      device.achieved_occupancy_pct = raw.double_value();
    }
  }
  return device;
}

// The launching op by correlation id (this device type's runtime first,
// then launches on plain host planes), else by the framework-op stat.
void Attribute(const xplane::EventVisitor& event, const DeviceStatIds& ids,
               const std::string& type, const Launches& launches, OpsByName& names,
               DeviceOpEvent& device) {
  if (const auto id = event.IntStat(ids.correlation); id && *id != 0) {
    auto launch = launches.find({type, *id});
    if (launch == launches.end()) launch = launches.find({"", *id});
    if (launch != launches.end() && launch->second >= 0) {
      device.op = launch->second;
      device.attribution = Attribution::kCorrelation;
      return;
    }
  }
  const auto op_name = event.StrStat(ids.tf_op);
  if (!op_name || op_name->empty()) return;
  device.op = names.LatestBefore(*op_name, device.start_ps);
  if (device.op >= 0) device.attribution = Attribution::kFrameworkOp;
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

DeviceEvents CollectDeviceEvents(const XSpace& space, const OperatorEvents& ops) {
  DeviceEvents result;
  OpsByThread threads(space, ops);
  const Launches launches = LaunchingOps(space, threads);
  OpsByName names(ops);
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsDevicePlane(space.planes(p))) continue;
    result.planes.push_back(p);
    const xplane::PlaneVisitor plane(space.planes(p));
    const DeviceStatIds ids(plane);
    const std::string type = DeviceTypeOf(plane.Name());
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      const int64_t line_ps = LineStartPs(line.TimestampNs());
      line.ForEachEvent([&](const xplane::EventVisitor& event) {
        DeviceOpEvent device = ReadDeviceEvent(plane, ids, event, p, line_ps);
        Attribute(event, ids, type, launches, names, device);
        switch (device.attribution) {
          case Attribution::kCorrelation: ++result.by_correlation; break;
          case Attribution::kFrameworkOp: ++result.by_framework_op; break;
          case Attribution::kNone: ++result.unattributed; break;
        }
        result.events.push_back(std::move(device));
      });
    });
  }
  return result;
}

}  // namespace analysis
}  // namespace neuronprof
