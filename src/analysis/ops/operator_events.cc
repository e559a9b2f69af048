#include "src/analysis/ops/operator_events.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>
#include <thread>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/xplane/host_events.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XSpace;

constexpr char kLayerPrefix[] = "layer:";
constexpr size_t kLayerPrefixSize = sizeof(kLayerPrefix) - 1;

// Stats the operator walk reads, resolved once per plane.
struct OperatorStatIds {
  explicit OperatorStatIds(const xplane::PlaneVisitor& plane)
      : framework(plane.StatId(xplane::kOpFrameworkStat)),
        root(plane.StatId(xplane::kRootLevelStat)),
        direction(plane.StatId(xplane::kOpDirectionStat)),
        seq(plane.StatId(xplane::kOpSequenceStat)),
        dims(plane.StatId(xplane::kOpInputDimsStat)),
        types(plane.StatId(xplane::kOpInputTypesStat)),
        values(plane.StatId(xplane::kOpInputValuesStat)),
        flops(plane.StatId(xplane::kFlopsStat)),
        bytes(plane.StatId(xplane::kBytesAccessedStat)) {}
  int64_t framework, root, direction, seq, dims, types, values, flops, bytes;
};

// A whole capture holds a few hundred distinct (op, direction, inputs)
// among millions of calls: their costs are computed once.
struct CachedCost {
  const OpCost* cost;  // in OperatorEvents::store
  std::string error;   // Non-empty when the input stats did not parse.
};

// One open event while walking a line.
struct Open {
  int64_t end_ps;
  int op_index;      // -1 for markers
  int enclosing_op;  // the innermost op open here (this one, or below), -1 if none
  // Scope and layer path of whatever nests in this event, built and
  // interned once when it opens rather than per nested op; "full" once a
  // path reached kMaxScopeBytes and ended in "...", so deeper markers share it.
  std::string_view scope;
  std::string_view layer;
  bool scope_full = false, layer_full = false;
};

// "a/b" + '/' + "c" -> "a/b/c"; "" + '/' + "c" -> "c".
std::string JoinPath(std::string_view path, char separator, std::string_view part) {
  std::string joined(path);
  if (!joined.empty()) joined.push_back(separator);
  joined.append(part.data(), part.size());
  return joined;
}

// `joined`, the path `path` extended by one marker, or `path` + "..." when
// that is longer than kMaxScopeBytes: a path's length, and with it the
// memory of every distinct path, stays bounded however deep markers nest.
std::string_view BoundedPath(OperatorEventsStore& store, std::string_view path, char separator,
                             std::string joined, bool* full) {
  if (joined.size() <= kMaxScopeBytes) return store.Intern(joined);
  *full = true;
  return store.Intern(JoinPath(path, separator, "..."));
}

// The layer path of a "layer:<name>" marker inside `path`: joined with ':',
// except that a dotted module path that extends the innermost layer
// ("encoder.attn" inside "encoder", as ModuleScope names them) replaces it.
std::string LayerPath(std::string_view path, std::string_view name) {
  const size_t last_colon = path.rfind(':');
  const size_t last_start = last_colon == std::string_view::npos ? 0 : last_colon + 1;
  const std::string_view last = path.substr(last_start);
  if (!last.empty() && name.size() > last.size() && name.substr(0, last.size()) == last &&
      name[last.size()] == '.') {
    std::string replaced(path.substr(0, last_start));
    return replaced.append(name.data(), name.size());
  }
  return JoinPath(path, ':', name);
}

// Whether `event` carries input stats itself (not only on its metadata).
bool CarriesInputStats(const XEvent& event, const OperatorStatIds& ids) {
  for (const auto& stat : event.stats()) {
    const int64_t id = stat.metadata_id();
    if (id == ids.dims || id == ids.types || id == ids.values) return true;
  }
  return false;
}

// The cost of an op by its name, direction and input stats, computed once
// per distinct key in `costs` (`key` is scratch).
const CachedCost& CostByInputs(const xplane::EventVisitor& event, const OperatorStatIds& ids,
                               std::string_view name, Direction direction, std::string* key,
                               absl::node_hash_map<std::string, CachedCost>* costs,
                               OperatorEventsStore* store) {
  // Views into the plane (interned values) or a scratch copy of
  // numbers: no per-op copies of the input strings.
  std::string dims_scratch, types_scratch, values_scratch;
  std::string_view dims, types, values;
  const std::optional<xplane::StatVisitor> dims_stat = event.Stat(ids.dims);
  if (dims_stat) {
    dims = dims_stat->TextValue(&dims_scratch);
    if (const auto stat = event.Stat(ids.types)) types = stat->TextValue(&types_scratch);
    if (const auto stat = event.Stat(ids.values)) values = stat->TextValue(&values_scratch);
  }
  key->assign(name)
      .append(direction == Direction::kBackward ? "\x1f"
                                                  "b"
                                                : "\x1f"
                                                  "f")
      .append(dims_stat ? "\x1f"
                          "1"
                        : "\x1f"
                          "0")
      .append(dims.data(), dims.size())
      .append(1, '\x1f')
      .append(types.data(), types.size())
      .append(1, '\x1f')
      .append(values.data(), values.size());
  auto cached = costs->find(*key);
  if (cached == costs->end()) {
    CachedCost entry;
    std::vector<OpInput> inputs;
    if (dims_stat) {
      auto parsed = ParseOpInputs(dims, types, values);
      if (parsed.ok()) {
        inputs = std::move(*parsed);
      } else {
        entry.error = std::string(parsed.status().message());
      }
    }
    entry.cost = store->Keep(ComputeOpCost(name, inputs, direction));
    cached = costs->emplace(*key, std::move(entry)).first;
  }
  return cached->second;
}

// One walk over a run of a line's events (in nesting order) that starts
// with nothing open, and what it keeps for itself: its ops, the strings
// and costs they point to, and its caches. The walks of one line run side
// by side on runs cut where nothing is open (see CutPoints).
struct RangeWalk {
  // Where the ops go: all[next], all[next + 1], ... (sized ahead for them);
  // parents index `all`.
  OperatorEvent* all = nullptr;
  size_t next = 0;
  OperatorEventsStore* store = nullptr;
  std::unique_ptr<OperatorEventsStore> own_store;      // The second walk's.
  absl::node_hash_map<std::string, CachedCost> costs;  // Stays where it is.
  absl::flat_hash_map<std::pair<int64_t, bool>, const CachedCost*> by_signature;
  // Costs read from the file (see below), one per (flops, bytes).
  absl::flat_hash_map<std::pair<int64_t, int64_t>, const OpCost*> written_costs;
  std::string cost_key;
  int64_t malformed_inputs = 0;
  std::string first_input_error;
};

// Where one plane's walks read from.
struct PlaneWalk {
  int plane;
  const xplane::PlaneVisitor& visitor;
  const OperatorStatIds& ids;
  const absl::flat_hash_set<int64_t>& memory_metadata;
  // Metadata that carries the framework stat (an operator's signature).
  const absl::flat_hash_set<int64_t>& op_metadata;

  // Whether a non-memory event is an operator (it or its metadata carries
  // the framework stat), from ids alone: the walks and CutPoints' count
  // of the ops before a run must agree.
  bool IsOperator(const XEvent& event) const {
    if (op_metadata.contains(event.metadata_id())) return true;
    for (const auto& stat : event.stats()) {
      if (stat.metadata_id() == ids.framework) return true;
    }
    return false;
  }
};
struct LineAt {
  int plane, line;
};

// Walks `order[begin, end)` of line `l`, writing its ops from
// walk->all[walk->next] on (parents by index into walk->all).
void WalkRange(const PlaneWalk& at_plane, int l, const std::vector<int>& order, size_t begin,
               size_t end_index, RangeWalk* walk) {
  const LineAt at{at_plane.plane, l};
  const xplane::LineVisitor line = at_plane.visitor.Line(l);
  const OperatorStatIds& ids = at_plane.ids;
  const absl::flat_hash_set<int64_t>& memory_metadata = at_plane.memory_metadata;
  const int64_t line_ps = LineStartPs(line.TimestampNs());
  OperatorEvent* const ops = walk->all;
  OperatorEventsStore& store = *walk->store;
  std::vector<Open> stack;
  for (size_t i = begin; i < end_index; ++i) {
    const int e = order[i];
    const XEvent& raw = line.raw().events(e);
    const int64_t start = SaturatingAdd(line_ps, raw.offset_ps());
    const int64_t end = SaturatingAdd(start, raw.duration_ps());
    while (!stack.empty() && stack.back().end_ps < end) stack.pop_back();
    if (memory_metadata.contains(raw.metadata_id())) continue;  // Instants, not scopes.
    const xplane::EventVisitor event = line.Event(e);
    if (!at_plane.IsOperator(raw)) {
      const bool step = xplane::IsStep(event.IntStat(ids.root), /*is_operator=*/false);
      Open open{end, -1, -1, {}, {}};
      if (!stack.empty()) open = stack.back();
      open.end_ps = end;
      open.op_index = -1;
      if (!step) {  // Steps are not scopes.
        const std::string_view marker = event.Name();
        if (!open.scope_full) {
          open.scope = BoundedPath(store, open.scope, '/', JoinPath(open.scope, '/', marker),
                                   &open.scope_full);
        }
        if (marker.substr(0, kLayerPrefixSize) == kLayerPrefix && !open.layer_full) {
          open.layer =
              BoundedPath(store, open.layer, ':',
                          LayerPath(open.layer, marker.substr(kLayerPrefixSize)), &open.layer_full);
        }
      }
      stack.push_back(std::move(open));
      continue;
    }
    OperatorEvent op;
    op.plane = at.plane;
    op.line = at.line;
    op.event = e;
    op.metadata_id = raw.metadata_id();
    op.name = event.Name();
    op.start_ps = start;
    op.duration_ps = event.DurationPs();
    op.self_ps = op.duration_ps;
    if (const auto direction = event.Stat(ids.direction)) {
      std::string scratch;
      op.direction = store.Intern(direction->TextValue(&scratch));
    }
    const std::optional<int64_t> seq = event.IntStat(ids.seq);
    op.has_seq = seq.has_value();
    op.seq = seq.value_or(op.seq);
    if (!stack.empty()) op.parent = stack.back().enclosing_op;  // the innermost wins
    if (!stack.empty()) {
      op.scope = stack.back().scope;
      op.layer = stack.back().layer;
    }
    if (op.direction.empty() && op.parent >= 0) op.direction = ops[op.parent].direction;
    if (op.direction.empty() && IsAutogradNodeName(op.name)) op.direction = "bprop";

    const Direction direction =
        op.direction == "bprop" ? Direction::kBackward : Direction::kForward;
    // Calls of one signature share the event metadata that holds their
    // inputs: unless an event carries input stats of its own, its cost
    // is found by (metadata, direction), without reading the inputs.
    const bool inputs_on_metadata = !CarriesInputStats(event.raw(), ids);
    const std::pair<int64_t, bool> signature{event.MetadataId(), direction == Direction::kBackward};
    const CachedCost* cached = nullptr;
    if (inputs_on_metadata) {
      const auto it = walk->by_signature.find(signature);
      if (it != walk->by_signature.end()) cached = it->second;
    }
    if (cached == nullptr) {
      cached = &CostByInputs(event, ids, op.name, direction, &walk->cost_key, &walk->costs, &store);
      if (inputs_on_metadata) walk->by_signature.emplace(signature, cached);
    }
    if (!cached->error.empty() && walk->malformed_inputs++ == 0) {
      walk->first_input_error = std::string(op.name) + ": " + cached->error;
    }
    op.formula = cached->cost;
    if (!op.formula->known && !op.formula->container) {
      // The cost the recording process wrote for an op no formula here
      // knows: a formula registered there (neuronprof/op_costs.h).
      const std::optional<int64_t> flops = event.IntStat(ids.flops);
      const int64_t bytes = event.IntStat(ids.bytes).value_or(-1);
      if (flops && *flops >= 0 && bytes >= 0) {
        const OpCost*& written = walk->written_costs[{*flops, bytes}];
        if (written == nullptr) {
          OpCost cost = *op.formula;
          cost.known = true;
          cost.flops = *flops;
          cost.bytes = bytes;
          written = store.Keep(std::move(cost));
        }
        op.formula = written;
      }
    }
    if (op.parent >= 0) {
      ops[op.parent].self_ps = SaturatingSub(ops[op.parent].self_ps, op.duration_ps);
    }
    // Ops pass their enclosing scope on unchanged.
    Open open{end, -1, -1, {}, {}};
    if (!stack.empty()) open = stack.back();
    open.end_ps = end;
    open.op_index = open.enclosing_op = static_cast<int>(walk->next);
    stack.push_back(std::move(open));
    ops[walk->next++] = op;
  }
}

// Self costs of ops[first_op, end), one run of a line's (children follow
// their parents, parents index into `ops` and are in the run).
void ResolveSelfCosts(OperatorEvent* ops, size_t first_op, size_t end) {
  // Resolve self costs (children follow their parents). FLOPs go to
  // the innermost ops with a non-zero FLOP formula, so a wrapper never
  // repeats its callee's work; an op that owns its FLOPs also owns the
  // bytes of everything nested in it (a GEMM's bias broadcast copy is
  // part of the GEMM); elsewhere bytes go to the innermost costed ops.
  const size_t count = end - first_op;
  std::vector<char> flops_below(count, 0), bytes_below(count, 0), has_children(count, 0);
  for (size_t i = end; i-- > first_op;) {
    OperatorEvent& op = ops[i];
    op.self_ps = std::max<int64_t>(op.self_ps, 0);
    if (op.parent < 0) continue;
    const size_t parent = op.parent - first_op, self = i - first_op;
    const bool known = op.formula->known;
    flops_below[parent] |= flops_below[self] || (known && op.formula->flops > 0);
    bytes_below[parent] |= bytes_below[self] || (known && op.formula->bytes > 0);
    has_children[parent] = 1;
  }
  std::vector<char> bytes_owned_above(count, 0);
  for (size_t i = first_op; i < end; ++i) {
    OperatorEvent& op = ops[i];
    const size_t self = i - first_op;
    const bool container = op.formula->container && has_children[self];
    const bool known = op.formula->known && !container;
    const bool owns_flops = known && op.formula->flops > 0 && !flops_below[self];
    bool owned_above = false;
    if (op.parent >= 0) {
      const size_t parent = op.parent - first_op;
      owned_above = bytes_owned_above[parent] ||
                    (ops[op.parent].source == CostSource::kOwn && ops[op.parent].self_flops > 0);
    }
    bytes_owned_above[self] = owned_above;
    op.self_flops = owns_flops ? op.formula->flops : 0;
    op.self_bytes = 0;
    if (known && !owned_above && (owns_flops || !bytes_below[self])) {
      op.self_bytes = op.formula->bytes;
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

// Lines shorter than this are walked in one run.
constexpr size_t kMinSplitEvents = 100000;
// Runs a long line is walked in, side by side. Three, not two: Annotate's
// memory walk runs beside them, and four threads share two cores evenly
// where three leave one a core to itself and the other two half of one.
constexpr size_t kWalkRuns = 3;

// Where a run after the first starts: an index into `order` where nothing
// opened before it is still open (every earlier non-memory event ends
// before the event there), and the operators before it (where the run's
// ops go). A walk that starts there with an empty stack finds what one
// walk of the whole line finds.
struct Cut {
  size_t at = 0;
  size_t ops_before = 0;
};
// Up to runs - 1 cuts, each the first such index from k/runs of `order`
// on (k = 1, 2, ...); fewer where the line has no such places.
std::vector<Cut> CutPoints(const PlaneWalk& at_plane, const XLine& line,
                           const std::vector<int>& order, size_t runs) {
  const int64_t line_ps = LineStartPs(line.timestamp_ns());  // Times as WalkRange computes them.
  std::vector<Cut> cuts;
  size_t target = order.size() / runs;
  int64_t max_end = std::numeric_limits<int64_t>::min();
  size_t ops = 0;
  for (size_t i = 0; i < order.size() && cuts.size() + 1 < runs; ++i) {
    const XEvent& event = line.events(order[i]);
    const int64_t end =
        SaturatingAdd(SaturatingAdd(line_ps, event.offset_ps()), event.duration_ps());
    if (i >= target && i > 0 && max_end < end) {
      cuts.push_back({i, ops});
      target = order.size() * (cuts.size() + 1) / runs;
    }
    if (at_plane.memory_metadata.contains(event.metadata_id())) continue;  // Never opens.
    max_end = std::max(max_end, end);
    ops += at_plane.IsOperator(event) ? 1 : 0;
  }
  return cuts;
}

}  // namespace

const OpCost* OperatorEventsStore::Keep(OpCost cost) {
  costs_.push_back(std::move(cost));
  return &costs_.back();
}

void OperatorEventsStore::Adopt(std::unique_ptr<OperatorEventsStore> other) {
  adopted_.push_back(std::move(other));
}

std::string_view OperatorEventsStore::Intern(std::string_view text) {
  const absl::string_view key(text.data(), text.size());  // Abseil's own type here
  auto it = strings_.find(key);
  if (it == strings_.end()) it = strings_.emplace(text).first;
  return *it;
}

std::string_view CostSourceName(CostSource source) {
  switch (source) {
    case CostSource::kOwn:
      return "own";
    case CostSource::kInChildren:
      return "in_children";
    case CostSource::kUnknown:
      break;
  }
  return "unknown";
}

OperatorEvents CollectOperatorEvents(const XSpace& space) {
  return CollectOperatorEvents(space, kMinSplitEvents);
}

OperatorEvents CollectOperatorEvents(const XSpace& space, size_t min_split_events) {
  OperatorEvents result;
  OperatorEventList& ops = result.ops;
  RangeWalk first;
  first.store = result.store.get();
  for (int p = 0; p < space.planes_size(); ++p) {
    if (!xplane::IsHostPlane(space.planes(p))) continue;
    const xplane::PlaneVisitor plane(space.planes(p));
    const OperatorStatIds ids(plane);
    if (ids.framework < 0) continue;  // No operators on this plane.
    ops.reserve(ops.size() + plane.NumEvents());
    // Memory events (about half of a kOperator capture's) are told by their
    // metadata id, without a visitor's metadata look-up per event.
    absl::flat_hash_set<int64_t> memory_metadata, op_metadata;
    for (const auto& [id, metadata] : space.planes(p).event_metadata()) {
      if (xplane::IsMemoryEventName(metadata.name())) memory_metadata.insert(id);
      for (const auto& stat : metadata.stats()) {
        if (stat.metadata_id() == ids.framework) op_metadata.insert(id);
      }
    }
    const PlaneWalk at_plane{p, plane, ids, memory_metadata, op_metadata};
    for (int l = 0; l < plane.NumLines(); ++l) {
      const XLine& line = space.planes(p).lines(l);
      const std::vector<int> order = xplane::SortedEventIndices(line);
      const std::vector<Cut> cuts = order.size() >= min_split_events
                                        ? CutPoints(at_plane, line, order, kWalkRuns)
                                        : std::vector<Cut>();
      // At most one op per event: room for all, written in place, then cut
      // to what was written.
      const size_t first_op = ops.size();
      ops.resize(first_op + order.size());
      first.all = ops.data();
      first.next = first_op;
      // The runs after the first on other cores, each with its own store
      // and caches, from the slot after the ops of the runs before it
      // (all count operators with IsOperator).
      std::vector<RangeWalk> later(cuts.size());
      std::vector<std::thread> threads;
      for (size_t r = 0; r < cuts.size(); ++r) {
        RangeWalk& walk = later[r];
        walk.own_store = std::make_unique<OperatorEventsStore>();
        walk.store = walk.own_store.get();
        walk.all = ops.data();
        walk.next = first_op + cuts[r].ops_before;
        const size_t end = r + 1 < cuts.size() ? cuts[r + 1].at : order.size();
        threads.emplace_back([&, r, end] {
          const size_t from = later[r].next;
          WalkRange(at_plane, l, order, cuts[r].at, end, &later[r]);
          ResolveSelfCosts(ops.data(), from, later[r].next);
        });
      }
      WalkRange(at_plane, l, order, 0, cuts.empty() ? order.size() : cuts[0].at, &first);
      ResolveSelfCosts(ops.data(), first_op, first.next);
      for (std::thread& thread : threads) thread.join();
      for (RangeWalk& walk : later) {
        first.next = walk.next;
        if (first.malformed_inputs == 0)
          first.first_input_error = std::move(walk.first_input_error);
        first.malformed_inputs += walk.malformed_inputs;
        result.store->Adopt(std::move(walk.own_store));
      }
      ops.resize(first.next);
    }
  }
  result.malformed_inputs = first.malformed_inputs;
  result.first_input_error = std::move(first.first_input_error);

  // PyProf: backward ops take the layer of their forward op (same seq).
  absl::flat_hash_map<int64_t, std::string_view> forward_layer;
  for (const OperatorEvent& op : ops) {
    if (!op.layer.empty() && op.has_seq && op.direction != "bprop") {
      forward_layer.emplace(op.seq, op.layer);
    }
  }
  if (forward_layer.empty()) return result;  // No layers: a pass less over a million ops.
  // The op itself or its innermost enclosing op with a seq (parents come
  // first), found once per op rather than by walking up from each.
  std::vector<int> with_seq(ops.size(), -1);
  for (size_t i = 0; i < ops.size(); ++i) {
    OperatorEvent& op = ops[i];
    with_seq[i] = op.has_seq ? static_cast<int>(i) : op.parent >= 0 ? with_seq[op.parent] : -1;
    if (op.direction != "bprop" || !op.layer.empty() || with_seq[i] < 0) continue;
    auto it = forward_layer.find(ops[with_seq[i]].seq);
    if (it != forward_layer.end()) op.layer = it->second;
  }
  return result;
}

}  // namespace analysis
}  // namespace neuronprof
