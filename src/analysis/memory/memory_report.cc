#include "src/analysis/memory/memory_report.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/work_count.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

constexpr char kNoOperator[] = "(no operator)";

// One allocation or free as the analysis needs it.
struct MemoryEvent {
  int64_t time_ps = 0;
  int plane = 0, line = 0;
  bool free = false;
  bool sample = false;               // a usage sample: only a total
  int64_t bytes = 0;                 // > 0
  std::optional<int64_t> allocated;  // the allocator's total after it
  int64_t reserved = 0;
  uint64_t address = 0;
  std::string op;
  std::string anomaly;
};

struct MemoryStatIds {
  explicit MemoryStatIds(const xplane::PlaneVisitor& plane)
      : allocator(plane.StatId(xplane::kAllocatorNameStat)),
        address(plane.StatId(xplane::kAddressStat)),
        requested(plane.StatId(xplane::kRequestedBytesStat)),
        allocation(plane.StatId(xplane::kAllocationBytesStat)),
        allocated(plane.StatId(xplane::kBytesAllocatedStat)),
        reserved(plane.StatId(xplane::kPoolReservedStat)),
        op(plane.StatId(xplane::kTfOpStat)),
        anomaly(plane.StatId(xplane::kMemoryAnomalyStat)) {}
  int64_t allocator, address, requested, allocation, allocated, reserved, op, anomaly;
};

// Memory events of every host plane, grouped by allocator, in time order.
std::map<std::string, std::vector<MemoryEvent>> MemoryEventsByAllocator(
    const tensorflow::profiler::XSpace& space) {
  std::map<std::string, std::vector<MemoryEvent>> by_allocator;
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsHostPlane(space.planes(p))) continue;
    const xplane::PlaneVisitor plane(space.planes(p));
    const MemoryStatIds ids(plane);
    if (ids.allocator < 0) continue;
    for (int l = 0; l < plane.NumLines(); ++l) {
      const xplane::LineVisitor line = plane.Line(l);
      line.ForEachEvent([&](const xplane::EventVisitor& event) {
        if (!xplane::IsMemoryEventName(event.Name())) return;
        MemoryEvent memory;
        memory.time_ps = SaturatingAdd(LineStartPs(line.TimestampNs()), event.OffsetPs());
        memory.plane = p;
        memory.line = l;
        memory.free = event.Name() == xplane::kMemoryDeallocationEvent;
        memory.sample = event.Name() == xplane::kMemoryUsageEvent;
        memory.bytes = std::max<int64_t>(
            event.IntStat(ids.allocation).value_or(event.IntStat(ids.requested).value_or(0)), 0);
        memory.allocated = event.IntStat(ids.allocated);
        memory.reserved = event.IntStat(ids.reserved).value_or(0);
        memory.address = static_cast<uint64_t>(event.IntStat(ids.address).value_or(0));
        memory.op = std::string(event.StrStat(ids.op).value_or(kNoOperator));
        memory.anomaly = std::string(event.StrStat(ids.anomaly).value_or(""));
        const std::string allocator(event.StrStat(ids.allocator).value_or("unknown"));
        by_allocator[allocator].push_back(std::move(memory));
      });
    }
  }
  for (auto& [name, events] : by_allocator) {
    std::stable_sort(events.begin(), events.end(), [](const MemoryEvent& a, const MemoryEvent& b) {
      return a.time_ps < b.time_ps;
    });
  }
  return by_allocator;
}

// "MLP/layer:fc1 > aten::linear > aten::addmm": the operators running at
// `time_ps` on the event's line, outermost first, after their scope; else
// the event's own op name.
std::string OperatorStackAt(const OperatorEvents& ops, const MemoryEvent& event) {
  int innermost = -1;
  for (size_t i = 0; i < ops.ops.size(); ++i) {
    const OperatorEvent& op = ops.ops[i];
    if (op.plane != event.plane || op.line != event.line) continue;
    if (op.start_ps <= event.time_ps &&
        event.time_ps <= SaturatingAdd(op.start_ps, op.duration_ps)) {
      innermost = static_cast<int>(i);  // Parents come before children on a line.
    }
  }
  if (innermost < 0) return event.op;
  std::vector<std::string_view> stack;
  for (int i = innermost; i >= 0; i = ops.ops[i].parent) stack.push_back(ops.ops[i].name);
  std::string text(ops.ops[innermost].scope);
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    if (!text.empty()) text += " > ";
    text.append(it->data(), it->size());
  }
  return text;
}

// The first step (in start order) whose window holds an instant, or -1:
// with the steps sorted by start, those starting by the instant are a
// prefix, and the first of them ending at or after it is where the running
// maximum of their ends first reaches it. O(log steps) per instant.
class StepFinder {
 public:
  explicit StepFinder(const std::vector<StepBreakdown>& steps) {
    int64_t latest = std::numeric_limits<int64_t>::min();
    for (const StepBreakdown& step : steps) {
      starts_.push_back(step.start_ps);
      latest = std::max(latest, SaturatingAdd(step.start_ps, step.duration_ps));
      latest_end_.push_back(latest);
    }
  }
  int At(int64_t time_ps) const {
    xplane::CountWork();
    const size_t started =
        std::upper_bound(starts_.begin(), starts_.end(), time_ps) - starts_.begin();
    const size_t first =
        std::lower_bound(latest_end_.begin(), latest_end_.end(), time_ps) - latest_end_.begin();
    return first < started ? static_cast<int>(first) : -1;
  }

 private:
  std::vector<int64_t> starts_, latest_end_;
};

// The largest of values[first, last) in O(log n) (a bottom-up segment tree).
class RangeMax {
 public:
  explicit RangeMax(const std::vector<int64_t>& values)
      : size_(values.size()), tree_(2 * values.size()) {
    std::copy(values.begin(), values.end(), tree_.begin() + size_);
    for (size_t i = size_; i-- > 1;) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
  }
  int64_t Max(size_t first, size_t last, int64_t floor) const {
    int64_t best = floor;
    for (first += size_, last += size_; first < last; first /= 2, last /= 2) {
      xplane::CountWork();
      if (first & 1) best = std::max(best, tree_[first++]);
      if (last & 1) best = std::max(best, tree_[--last]);
    }
    return best;
  }

 private:
  size_t size_;
  std::vector<int64_t> tree_;
};

void Flag(AllocatorMemory* memory, const std::string& what) {
  if (memory->anomalies++ == 0) memory->first_anomaly = what;
}

AllocatorMemory Analyze(const std::string& name, const std::vector<MemoryEvent>& events,
                        const OperatorEvents& ops, const std::vector<StepBreakdown>& steps) {
  AllocatorMemory memory;
  memory.allocator = name;
  struct Live {
    std::string op;
    int64_t bytes;
    int step;  // Index into `steps`, -1 outside every step.
  };
  absl::flat_hash_map<uint64_t, Live> live;
  std::map<std::string, OpMemory, std::less<>> by_op;
  std::vector<int64_t> allocated_after(events.size());
  int64_t allocated = 0;  // Our running total where the allocator gives none.
  const MemoryEvent* peak = nullptr;
  const StepFinder step_at(steps);
  for (size_t i = 0; i < events.size(); ++i) {
    const MemoryEvent& event = events[i];
    if (!event.anomaly.empty()) Flag(&memory, event.anomaly + " (" + event.op + ")");
    if (event.sample) {
      // Only the total below.
    } else if (event.free) {
      ++memory.frees;
      auto it = live.find(event.address);
      if (it != live.end()) {
        OpMemory& row = by_op[it->second.op];
        row.freed_bytes = SaturatingAdd(row.freed_bytes, it->second.bytes);
        live.erase(it);
      }
      allocated = SaturatingSub(allocated, event.bytes);
    } else if (event.anomaly.empty()) {
      ++memory.allocations;
      OpMemory& row = by_op[event.op];
      ++row.allocations;
      row.allocated_bytes = SaturatingAdd(row.allocated_bytes, event.bytes);
      live[event.address] = {event.op, event.bytes, step_at.At(event.time_ps)};
      allocated = SaturatingAdd(allocated, event.bytes);
    }
    if (event.allocated) allocated = *event.allocated;
    if (allocated < 0) {
      Flag(&memory,
           absl::StrCat(SaturatingNeg(allocated), " bytes freed beyond what was allocated"));
      allocated = 0;
    }
    allocated_after[i] = allocated;
    if (peak == nullptr || allocated > memory.peak_allocated_bytes) {
      memory.peak_allocated_bytes = allocated;
      peak = &event;
    }
    memory.peak_reserved_bytes = std::max(memory.peak_reserved_bytes, event.reserved);
  }
  if (!events.empty()) {
    // Before the first event: its total less its own change.
    const MemoryEvent& first = events.front();
    const int64_t change = !first.anomaly.empty() || first.sample ? 0
                           : first.free                           ? SaturatingNeg(first.bytes)
                                                                  : first.bytes;
    memory.start_bytes = std::max<int64_t>(SaturatingSub(allocated_after.front(), change), 0);
    memory.end_bytes = allocated_after.back();
    memory.peak_time_ps = peak->time_ps;
    memory.peak_op = OperatorStackAt(ops, *peak);
  }
  for (const OperatorEvent& op : ops.ops) {
    auto it = by_op.find(op.name);
    if (it != by_op.end()) ++it->second.calls;
  }
  // Blocks still held at the end, by the step that allocated them: an op
  // that leaks holds blocks from every step.
  std::map<std::string, std::set<int>> held_steps;
  for (const auto& [address, block] : live) {
    if (block.step >= 0) held_steps[block.op].insert(block.step);
  }
  for (const auto& [op, step_set] : held_steps) {
    by_op[op].steps_holding = static_cast<int64_t>(step_set.size());
  }
  for (auto& [op, row] : by_op) {
    row.op = op;
    memory.by_op.push_back(row);
  }
  std::stable_sort(memory.by_op.begin(), memory.by_op.end(),
                   [](const OpMemory& a, const OpMemory& b) {
                     if (a.net_bytes() != b.net_bytes()) return a.net_bytes() > b.net_bytes();
                     return a.allocated_bytes > b.allocated_bytes;
                   });
  // Events are in time order: each step's are a range, found by binary
  // search, its peak a range maximum (steps can nest or overlap: a scan of
  // each step's events is quadratic).
  const RangeMax peak_in(allocated_after);
  auto before = [&](int64_t time_ps) {  // events before `time_ps`
    return static_cast<size_t>(
        std::partition_point(events.begin(), events.end(),
                             [&](const MemoryEvent& e) { return e.time_ps < time_ps; }) -
        events.begin());
  };
  for (const StepBreakdown& step : steps) {
    const int64_t end = SaturatingAdd(step.start_ps, step.duration_ps);
    StepMemory row;
    row.step = step.name;
    // Allocated when the step starts: after the last event before it.
    const size_t first = before(step.start_ps);
    const int64_t at_start = first > 0 ? allocated_after[first - 1] : memory.start_bytes;
    const size_t last = std::max(
        first, static_cast<size_t>(
                   std::partition_point(events.begin() + first, events.end(),
                                        [&](const MemoryEvent& e) { return e.time_ps <= end; }) -
                   events.begin()));
    const int64_t at_end = last > first ? allocated_after[last - 1] : at_start;
    row.peak_bytes = peak_in.Max(first, last, at_start);
    row.growth_bytes = SaturatingSub(at_end, at_start);
    memory.steps.push_back(row);
  }
  return memory;
}

}  // namespace

MemoryReport BuildMemoryReport(const tensorflow::profiler::XSpace& space, const OperatorEvents& ops,
                               const std::vector<StepBreakdown>& steps) {
  MemoryReport report;
  for (const auto& [name, events] : MemoryEventsByAllocator(space)) {
    report.allocators.push_back(Analyze(name, events, ops, steps));
  }
  return report;
}

}  // namespace analysis
}  // namespace neuronprof
