#include "src/analysis/ops/operator_annotator.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "src/analysis/ops/operator_events.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// xprof takes a type that starts upper case as a TensorFlow op type
// ([A-Z_][A-Za-z0-9_]*) and an all lower-case one as a JAX op type; a
// lower-case type with capitals in it matches neither and the row loses
// its type, so such names are lower-cased.
std::string OpType(std::string_view op_name) {
  std::string type =
      absl::StrReplaceAll(absl::string_view(op_name.data(), op_name.size()), {{"::", "__"}});
  for (char& c : type) {
    if (!IsWordChar(c)) c = '_';
  }
  if (type.empty()) return "unknown";
  if (!std::isupper(static_cast<unsigned char>(type[0]))) {
    for (char& c : type) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return type;
}

// TensorFlow op names allow [A-Za-z0-9_./-] (xprof drops the type of a
// TF-typed row whose name has other characters, e.g. a space).
std::string OpNamePart(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (!IsWordChar(c) && c != '.' && c != '/' && c != '-') c = '_';
  }
  return out;
}

// Drops the stats with these metadata ids (a re-run replaces its output).
void RemoveStats(tensorflow::profiler::XEvent* event, const std::vector<int64_t>& ids) {
  auto* stats = event->mutable_stats();
  for (int i = stats->size(); i-- > 0;) {
    if (std::find(ids.begin(), ids.end(), stats->Get(i).metadata_id()) != ids.end()) {
      stats->DeleteSubrange(i, 1);
    }
  }
}

std::vector<int64_t> ExistingStatIds(const tensorflow::profiler::XPlane& plane,
                                     std::initializer_list<std::string_view> names) {
  const xplane::PlaneVisitor visitor(plane);
  std::vector<int64_t> ids;
  for (std::string_view name : names) {
    if (const int64_t id = visitor.StatId(name); id >= 0) ids.push_back(id);
  }
  return ids;
}

}  // namespace

std::string TfOpValue(std::string_view scope, std::string_view op_name) {
  const std::string type = OpType(op_name);
  if (scope.empty()) return type + ":" + type;
  return absl::StrCat(OpNamePart(scope), "/", type, ":", type);
}

namespace {

// tf_op, flops, bytes (the host collector reserves room for these in
// each operator's stat array: src/collectors/host).
constexpr int kMaxStatsAdded = 3;

}  // namespace

// The plane being annotated: its stat ids resolved once, and each distinct
// ref_value interned once (a million ops repeat a few hundred strings), so
// a stat costs one protobuf Add instead of two hashed name look-ups.
class PlaneAnnotator {
 public:
  using Ref = std::pair<const std::string, uint64_t>;

  explicit PlaneAnnotator(tensorflow::profiler::XPlane* plane)
      : builder_(plane),
        stale_ids_(
            ExistingStatIds(*plane, {xplane::kOpScopeStat, xplane::kOpLayerStat, xplane::kTfOpStat,
                                     xplane::kFlopsStat, xplane::kBytesAccessedStat})),
        scope_id_(builder_.StatMetadataId(xplane::kOpScopeStat)),
        layer_id_(builder_.StatMetadataId(xplane::kOpLayerStat)),
        tf_op_id_(builder_.StatMetadataId(xplane::kTfOpStat)),
        flops_id_(builder_.StatMetadataId(xplane::kFlopsStat)),
        bytes_id_(builder_.StatMetadataId(xplane::kBytesAccessedStat)) {}

  // Makes every id `op`'s stats and metadata refer to, in the order one
  // pass would make them: adding them to its event (AddStats) then makes
  // nothing. Reads the ops alone, not their events (a cache miss each).
  void Plan(const OperatorEvent& op) {
    const Ref* scope = nullptr;  // the interned scope; null for none
    if (!op.scope.empty()) scope = Interned(op.scope, &last_scope_);
    const Ref* layer = op.layer.empty() ? nullptr : Interned(op.layer, &last_layer_);
    if (scope != nullptr || layer != nullptr) ScopedMetadataId(op.metadata_id, scope, layer);
    // Scopes and op names repeat every step: build each tf_op once, found
    // by the interned scope's address and the op name (no per-op copy).
    auto& tf_ops = tf_op_refs_[scope];
    auto tf_op = tf_ops.find(absl::string_view(op.name.data(), op.name.size()));
    if (tf_op == tf_ops.end()) {
      tf_ops.emplace(op.name, RefId(TfOpValue(op.scope, op.name)));
    }
  }

  // The refs Plan interned last, per caller of AddStats.
  struct LastRefs {
    const Ref* scope = nullptr;
    const Ref* layer = nullptr;
  };

  // Sets `event`'s metadata and adds `op`'s stats once Plan made their
  // ids; only reads this annotator, so calls may run side by side.
  void AddStats(const OperatorEvent& op, LastRefs* last,
                tensorflow::profiler::XEvent* event) const {
    const Ref* scope = op.scope.empty() ? nullptr : Planned(op.scope, &last->scope);
    const Ref* layer = op.layer.empty() ? nullptr : Planned(op.layer, &last->layer);
    if (scope != nullptr || layer != nullptr) {
      event->set_metadata_id(
          scoped_metadata_.find(std::make_tuple(op.metadata_id, scope, layer))->second);
    }
    const uint64_t tf_op_ref = tf_op_refs_.find(scope)
                                   ->second.find(absl::string_view(op.name.data(), op.name.size()))
                                   ->second;
    const auto stat = [event](int64_t metadata_id) {
      tensorflow::profiler::XStat* added = event->add_stats();
      added->set_metadata_id(metadata_id);
      return added;
    };
    if (!stale_ids_.empty()) RemoveStats(event, stale_ids_);
    event->mutable_stats()->Reserve(event->stats_size() + kMaxStatsAdded);
    stat(tf_op_id_)->set_ref_value(tf_op_ref);
    if (op.source != CostSource::kUnknown) {
      stat(flops_id_)->set_int64_value(op.self_flops);
      stat(bytes_id_)->set_int64_value(op.self_bytes);
    }
  }

 private:
  // Scope and layer are the same for every call of a signature at one
  // place in the model: they go on a copy of the op's metadata made once
  // per (metadata, scope, layer), not on each event. Only our readers use
  // them (through the visitor's metadata fallback); the stats xprof reads
  // from events (tf_op, flops, bytes_accessed) stay there.
  int64_t ScopedMetadataId(int64_t metadata_id, const Ref* scope, const Ref* layer) {
    const auto key = std::make_tuple(metadata_id, scope, layer);
    auto it = scoped_metadata_.find(key);
    if (it != scoped_metadata_.end()) return it->second;
    const auto& all = builder_.plane()->event_metadata();
    const auto base = all.find(metadata_id);
    if (base == all.end()) {  // a crafted file: leave it
      scoped_metadata_.emplace(key, metadata_id);
      return metadata_id;
    }
    int64_t id = metadata_id;
    if (!CarriesExactly(base->second, scope, layer)) {  // else annotated before
      // A copy first: adding to the map may move what `base` points to.
      const tensorflow::profiler::XEventMetadata original = base->second;
      tensorflow::profiler::XEventMetadata* copy = builder_.NewEventMetadata(original.name());
      copy->set_display_name(original.display_name());
      for (const auto& stat : original.stats()) {
        if (std::find(stale_ids_.begin(), stale_ids_.end(), stat.metadata_id()) ==
            stale_ids_.end()) {
          *copy->add_stats() = stat;
        }
      }
      if (scope != nullptr) AddRefTo(copy->add_stats(), scope_id_, *scope);
      if (layer != nullptr) AddRefTo(copy->add_stats(), layer_id_, *layer);
      id = copy->id();
    }
    scoped_metadata_.emplace(key, id);
    return id;
  }

  // True when `metadata` holds this scope and layer and no other stat an
  // annotation adds.
  bool CarriesExactly(const tensorflow::profiler::XEventMetadata& metadata, const Ref* scope,
                      const Ref* layer) const {
    int found = 0, expected = (scope != nullptr) + (layer != nullptr);
    for (const auto& stat : metadata.stats()) {
      const bool is_scope = stat.metadata_id() == scope_id_,
                 is_layer = stat.metadata_id() == layer_id_;
      if (is_scope || is_layer) {
        const Ref* want = is_scope ? scope : layer;
        if (want == nullptr || stat.ref_value() != want->second) return false;
        ++found;
      } else if (std::find(stale_ids_.begin(), stale_ids_.end(), stat.metadata_id()) !=
                 stale_ids_.end()) {
        return false;
      }
    }
    return found == expected;
  }

  static void AddRefTo(tensorflow::profiler::XStat* stat, int64_t metadata_id, const Ref& value) {
    stat->set_metadata_id(metadata_id);
    stat->set_ref_value(value.second);
  }

  // The ref Plan made for `value`; `*last` as with RefId.
  const Ref* Planned(std::string_view value, const Ref** last) const {
    if (*last == nullptr || (*last)->first != value) {
      *last = &*refs_.find(absl::string_view(value.data(), value.size()));
    }
    return *last;
  }

  const Ref* Interned(std::string_view value, const Ref** last) {
    RefId(value, last);
    return *last;
  }
  // `*last` (when given) is the entry this stat used last: ops in a row
  // mostly share their scope and layer, so a long path is compared, not
  // hashed, per op.
  uint64_t RefId(std::string_view value, const Ref** last = nullptr) {
    if (last != nullptr && *last != nullptr && (*last)->first == value) return (*last)->second;
    auto it = refs_.find(absl::string_view(value.data(), value.size()));
    if (it == refs_.end()) {
      it = refs_.emplace(std::string(value), static_cast<uint64_t>(builder_.StatMetadataId(value)))
               .first;
    }
    if (last != nullptr) *last = &*it;  // node_hash_map: stays valid as it grows
    return it->second;
  }
  xplane::XPlaneBuilder builder_;
  std::vector<int64_t> stale_ids_;
  int64_t scope_id_, layer_id_, tf_op_id_, flops_id_, bytes_id_;
  absl::node_hash_map<std::string, uint64_t> refs_;
  absl::flat_hash_map<std::tuple<int64_t, const Ref*, const Ref*>, int64_t> scoped_metadata_;
  const Ref* last_scope_ = nullptr;
  const Ref* last_layer_ = nullptr;
  // tf_op ref ids by interned scope, then op name.
  absl::flat_hash_map<const Ref*, absl::flat_hash_map<std::string, uint64_t>> tf_op_refs_;
};

void AnnotateOperatorEvents(tensorflow::profiler::XSpace* space) {
  AnnotateOperatorEvents(CollectOperatorEvents(*space), space);
}

void AnnotateOperatorEvents(const OperatorEvents& events, tensorflow::profiler::XSpace* space) {
  ApplyOperatorAnnotation(events, PlanOperatorAnnotation(events, space), 0, 1, space);
}

OperatorAnnotation::OperatorAnnotation() = default;
OperatorAnnotation::~OperatorAnnotation() = default;
OperatorAnnotation::OperatorAnnotation(OperatorAnnotation&&) noexcept = default;
OperatorAnnotation& OperatorAnnotation::operator=(OperatorAnnotation&&) noexcept = default;

OperatorAnnotation PlanOperatorAnnotation(const OperatorEvents& events,
                                          tensorflow::profiler::XSpace* space) {
  OperatorAnnotation annotation;
  annotation.planes_.resize(space->planes_size());
  for (const OperatorEvent& op : events.ops) {
    tensorflow::profiler::XPlane* plane = space->mutable_planes(op.plane);
    std::unique_ptr<PlaneAnnotator>& annotator = annotation.planes_[op.plane];
    if (annotator == nullptr) annotator = std::make_unique<PlaneAnnotator>(plane);
    annotator->Plan(op);
  }
  return annotation;
}

void ApplyOperatorAnnotation(const OperatorEvents& events, const OperatorAnnotation& annotation,
                             int part, int parts, tensorflow::profiler::XSpace* space) {
  PlaneAnnotator::LastRefs last;
  const size_t count = events.ops.size();
  for (size_t i = count * part / parts; i < count * (part + 1) / parts; ++i) {
    const OperatorEvent& op = events.ops[i];
    tensorflow::profiler::XPlane* plane = space->mutable_planes(op.plane);
    annotation.planes_[op.plane]->AddStats(op, &last,
                                           plane->mutable_lines(op.line)->mutable_events(op.event));
  }
}

}  // namespace analysis
}  // namespace neuronprof
