#include "src/analysis/operator_events.h"

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/analysis/saturating.h"
#include "src/xplane/names.h"
#include "src/xplane/stat_lookup.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using tensorflow::profiler::XStat;

constexpr char kLayerPrefix[] = "layer:";
constexpr size_t kLayerPrefixSize = sizeof(kLayerPrefix) - 1;

using xplane::FindStat;
using xplane::StatId;

// True and *out set when the stat holds an integer.
bool StatInt(const XStat* stat, int64_t* out) {
  const std::optional<int64_t> value = xplane::IntValue(stat);
  if (value) *out = *value;
  return value.has_value();
}

// Stats the operator walk reads, resolved once per plane.
struct OperatorStatIds {
  explicit OperatorStatIds(const XPlane& plane)
      : framework(StatId(plane, xplane::kOpFrameworkStat)),
        root(StatId(plane, xplane::kRootLevelStat)),
        direction(StatId(plane, xplane::kOpDirectionStat)),
        seq(StatId(plane, xplane::kOpSequenceStat)),
        dims(StatId(plane, xplane::kOpInputDimsStat)),
        types(StatId(plane, xplane::kOpInputTypesStat)),
        values(StatId(plane, xplane::kOpInputValuesStat)) {}
  int64_t framework, root, direction, seq, dims, types, values;
};

// A whole capture holds a few hundred distinct (op, direction, inputs)
// among millions of calls: their costs are computed once.
struct CachedCost {
  OpCost cost;
  std::string error;  // Non-empty when the input stats did not parse.
};

std::string EventName(const XPlane& plane, const XEvent& event) {
  auto it = plane.event_metadata().find(event.metadata_id());
  return it == plane.event_metadata().end() ? "" : it->second.name();
}

// One open event while walking a line.
struct Open {
  int64_t end_ps;
  int op_index;        // -1 for markers
  // Scope and layer path of whatever nests in this event, built once when
  // it opens rather than per nested op.
  std::shared_ptr<const std::string> scope;
  std::shared_ptr<const std::string> layer;
};

}  // namespace

std::string_view CostSourceName(CostSource source) {
  switch (source) {
    case CostSource::kOwn: return "own";
    case CostSource::kInChildren: return "in_children";
    case CostSource::kUnknown: break;
  }
  return "unknown";
}

bool EventStatText(const XPlane& plane, const XEvent& event, std::string_view name,
                   std::string* out) {
  const XStat* stat = FindStat(plane, event, StatId(plane, name));
  if (!stat) return false;
  std::string scratch;
  const std::string_view text = xplane::TextValue(plane, *stat, &scratch);
  out->assign(text.data(), text.size());
  return true;
}

bool EventStatInt(const XPlane& plane, const XEvent& event, std::string_view name,
                  int64_t* out) {
  return StatInt(FindStat(plane, event, StatId(plane, name)), out);
}

std::vector<int> SortedEventIndices(const XLine& line) {
  std::vector<int> order(line.events_size());
  for (int i = 0; i < line.events_size(); ++i) order[i] = i;
  auto before = [&](int a, int b) {
    const XEvent& x = line.events(a);
    const XEvent& y = line.events(b);
    if (x.offset_ps() != y.offset_ps()) return x.offset_ps() < y.offset_ps();
    return x.duration_ps() > y.duration_ps();
  };
  // Our own host planes are written in this order already.
  if (!std::is_sorted(order.begin(), order.end(), before)) {
    std::stable_sort(order.begin(), order.end(), before);
  }
  return order;
}

OperatorEvents CollectOperatorEvents(const XSpace& space) {
  OperatorEvents result;
  std::vector<OperatorEvent>& ops = result.ops;
  absl::flat_hash_map<std::string, CachedCost> costs;
  std::string cost_key;
  for (int p = 0; p < space.planes_size(); ++p) {
    const XPlane& plane = space.planes(p);
    if (!absl::StartsWith(plane.name(), "/host:")) continue;
    const OperatorStatIds ids(plane);
    if (ids.framework < 0) continue;  // No operators on this plane.
    size_t plane_events = 0;
    for (const XLine& line : plane.lines()) plane_events += line.events_size();
    ops.reserve(ops.size() + plane_events);
    for (int l = 0; l < plane.lines_size(); ++l) {
      const XLine& line = plane.lines(l);
      const int64_t line_ps = LineStartPs(line.timestamp_ns());
      const size_t first_op = ops.size();
      std::vector<Open> stack;
      const auto empty = std::make_shared<const std::string>();
      for (int e : SortedEventIndices(line)) {
        const XEvent& event = line.events(e);
        const int64_t start = SaturatingAdd(line_ps, event.offset_ps());
        const int64_t end = SaturatingAdd(start, event.duration_ps());
        while (!stack.empty() && stack.back().end_ps < end) stack.pop_back();
        if (FindStat(plane, event, ids.framework) == nullptr) {
          int64_t root = 0;
          const bool step = StatInt(FindStat(plane, event, ids.root), &root) && root != 0;
          Open open{end, -1, empty, empty};
          if (!stack.empty()) {
            open.scope = stack.back().scope;
            open.layer = stack.back().layer;
          }
          if (!step) {  // Steps are not scopes.
            const std::string marker = EventName(plane, event);
            open.scope = std::make_shared<const std::string>(
                open.scope->empty() ? marker : absl::StrCat(*open.scope, "/", marker));
            if (absl::StartsWith(marker, kLayerPrefix)) {
              const std::string layer = marker.substr(kLayerPrefixSize);
              open.layer = std::make_shared<const std::string>(
                  open.layer->empty() ? layer : absl::StrCat(*open.layer, ":", layer));
            }
          }
          stack.push_back(std::move(open));
          continue;
        }
        OperatorEvent op;
        op.plane = p;
        op.line = l;
        op.event = e;
        op.name = EventName(plane, event);
        op.start_ps = start;
        op.duration_ps = event.duration_ps();
        op.self_ps = op.duration_ps;
        if (const XStat* direction = FindStat(plane, event, ids.direction)) {
          std::string scratch;
          const std::string_view text = xplane::TextValue(plane, *direction, &scratch);
          op.direction.assign(text.data(), text.size());
        }
        op.has_seq = StatInt(FindStat(plane, event, ids.seq), &op.seq);
        for (auto open = stack.rbegin(); open != stack.rend(); ++open) {
          if (open->op_index >= 0) {
            op.parent = open->op_index;  // the innermost enclosing op wins
            break;
          }
        }
        if (!stack.empty()) {
          op.scope = *stack.back().scope;
          op.layer = *stack.back().layer;
        }
        if (op.direction.empty() && op.parent >= 0) op.direction = ops[op.parent].direction;
        if (op.direction.empty() && IsAutogradNodeName(op.name)) op.direction = "bprop";

        // Views into the plane (interned values) or a scratch copy of
        // numbers: no per-op copies of the input strings.
        std::string dims_scratch, types_scratch, values_scratch;
        std::string_view dims, types, values;
        const XStat* dims_stat = FindStat(plane, event, ids.dims);
        if (dims_stat != nullptr) {
          dims = xplane::TextValue(plane, *dims_stat, &dims_scratch);
          if (const XStat* stat = FindStat(plane, event, ids.types)) {
            types = xplane::TextValue(plane, *stat, &types_scratch);
          }
          if (const XStat* stat = FindStat(plane, event, ids.values)) {
            values = xplane::TextValue(plane, *stat, &values_scratch);
          }
        }
        const Direction direction =
            op.direction == "bprop" ? Direction::kBackward : Direction::kForward;
        cost_key.assign(op.name)
            .append(direction == Direction::kBackward ? "\x1f" "b" : "\x1f" "f")
            .append(dims_stat ? "\x1f" "1" : "\x1f" "0")
            .append(dims.data(), dims.size())
            .append(1, '\x1f')
            .append(types.data(), types.size())
            .append(1, '\x1f')
            .append(values.data(), values.size());
        auto cached = costs.find(cost_key);
        if (cached == costs.end()) {
          CachedCost entry;
          std::vector<OpInput> inputs;
          if (dims_stat != nullptr) {
            auto parsed = ParseOpInputs(dims, types, values);
            if (parsed.ok()) {
              inputs = std::move(*parsed);
            } else {
              entry.error = std::string(parsed.status().message());
            }
          }
          entry.cost = ComputeOpCost(op.name, inputs, direction);
          cached = costs.emplace(cost_key, std::move(entry)).first;
        }
        if (!cached->second.error.empty() && result.malformed_inputs++ == 0) {
          result.first_input_error = absl::StrCat(op.name, ": ", cached->second.error);
        }
        op.formula = cached->second.cost;
        if (op.parent >= 0) {
          ops[op.parent].self_ps = SaturatingSub(ops[op.parent].self_ps, op.duration_ps);
        }
        // Ops pass their enclosing scope on unchanged.
        Open open{end, static_cast<int>(ops.size()), empty, empty};
        if (!stack.empty()) {
          open.scope = stack[stack.size() - 1].scope;
          open.layer = stack[stack.size() - 1].layer;
        }
        stack.push_back(std::move(open));
        ops.push_back(std::move(op));
      }

      // Resolve self costs (children follow their parents). FLOPs go to
      // the innermost ops with a non-zero FLOP formula, so a wrapper never
      // repeats its callee's work; an op that owns its FLOPs also owns the
      // bytes of everything nested in it (a GEMM's bias broadcast copy is
      // part of the GEMM); elsewhere bytes go to the innermost costed ops.
      const size_t count = ops.size() - first_op;
      std::vector<char> flops_below(count, 0), bytes_below(count, 0),
          has_children(count, 0);
      for (size_t i = ops.size(); i-- > first_op;) {
        OperatorEvent& op = ops[i];
        op.self_ps = std::max<int64_t>(op.self_ps, 0);
        if (op.parent < 0) continue;
        const size_t parent = op.parent - first_op, self = i - first_op;
        const bool known = op.formula.known;
        flops_below[parent] |= flops_below[self] || (known && op.formula.flops > 0);
        bytes_below[parent] |= bytes_below[self] || (known && op.formula.bytes > 0);
        has_children[parent] = 1;
      }
      std::vector<char> bytes_owned_above(count, 0);
      for (size_t i = first_op; i < ops.size(); ++i) {
        OperatorEvent& op = ops[i];
        const size_t self = i - first_op;
        const bool container = op.formula.container && has_children[self];
        const bool known = op.formula.known && !container;
        const bool owns_flops = known && op.formula.flops > 0 && !flops_below[self];
        bool owned_above = false;
        if (op.parent >= 0) {
          const size_t parent = op.parent - first_op;
          owned_above = bytes_owned_above[parent] ||
                        (ops[op.parent].source == CostSource::kOwn &&
                         ops[op.parent].self_flops > 0);
        }
        bytes_owned_above[self] = owned_above;
        op.self_flops = owns_flops ? op.formula.flops : 0;
        op.self_bytes = 0;
        if (known && !owned_above && (owns_flops || !bytes_below[self])) {
          op.self_bytes = op.formula.bytes;
        }
        if (owns_flops || (known && !flops_below[self] && !bytes_below[self])) {
          op.source = CostSource::kOwn;
        } else if (flops_below[self] || bytes_below[self] || container) {
          op.source = CostSource::kInChildren;
        } else {
          op.source = CostSource::kUnknown;
        }
      }
    }
  }

  // PyProf: backward ops take the layer of their forward op (same seq).
  absl::flat_hash_map<int64_t, std::string> forward_layer;
  for (const OperatorEvent& op : ops) {
    if (op.has_seq && op.direction != "bprop" && !op.layer.empty()) {
      forward_layer.emplace(op.seq, op.layer);
    }
  }
  for (OperatorEvent& op : ops) {
    if (op.direction != "bprop" || !op.layer.empty()) continue;
    int j = static_cast<int>(&op - ops.data());
    while (j >= 0 && !ops[j].has_seq) j = ops[j].parent;
    if (j < 0) continue;
    auto it = forward_layer.find(ops[j].seq);
    if (it != forward_layer.end()) op.layer = it->second;
  }
  return result;
}

}  // namespace analysis
}  // namespace neuronprof
