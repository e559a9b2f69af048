#include "src/analysis/operator_annotator.h"

#include <algorithm>
#include <cctype>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "src/analysis/operator_events.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace analysis {
namespace {

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// xprof takes a type that starts upper case as a TensorFlow op type
// ([A-Z_][A-Za-z0-9_]*) and an all lower-case one as a JAX op type; a
// lower-case type with capitals in it matches neither and the row loses
// its type, so such names are lower-cased.
std::string OpType(std::string_view op_name) {
  std::string type = absl::StrReplaceAll(absl::string_view(op_name.data(), op_name.size()),
                                         {{"::", "__"}});
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
  std::vector<int64_t> ids;
  for (const auto& [id, metadata] : plane.stat_metadata()) {
    for (std::string_view name : names) {
      if (metadata.name() == name) ids.push_back(id);
    }
  }
  return ids;
}

}  // namespace

std::string TfOpValue(std::string_view scope, std::string_view op_name) {
  const std::string type = OpType(op_name);
  if (scope.empty()) return type + ":" + type;
  return absl::StrCat(OpNamePart(scope), "/", type, ":", type);
}

void AnnotateOperatorEvents(tensorflow::profiler::XSpace* space) {
  const OperatorEvents events = CollectOperatorEvents(*space);
  int builder_plane = -1;
  std::unique_ptr<xplane::XPlaneBuilder> builder;
  std::vector<int64_t> stale_ids;
  // Scopes and op names repeat every step: build each tf_op once.
  absl::flat_hash_map<std::string, std::string> tf_ops;
  std::string key;
  for (const OperatorEvent& op : events.ops) {
    tensorflow::profiler::XPlane* plane = space->mutable_planes(op.plane);
    if (op.plane != builder_plane) {
      stale_ids = ExistingStatIds(*plane, {xplane::kOpScopeStat, xplane::kOpLayerStat,
                                           xplane::kTfOpStat, xplane::kFlopsStat,
                                           xplane::kBytesAccessedStat});
      builder = std::make_unique<xplane::XPlaneBuilder>(plane);
      builder_plane = op.plane;
      tf_ops.clear();
    }
    tensorflow::profiler::XEvent* event =
        plane->mutable_lines(op.line)->mutable_events(op.event);
    if (!stale_ids.empty()) RemoveStats(event, stale_ids);
    if (!op.scope.empty()) builder->AddRefStat(event, xplane::kOpScopeStat, op.scope);
    if (!op.layer.empty()) builder->AddRefStat(event, xplane::kOpLayerStat, op.layer);
    key.assign(op.scope).append("\x1f").append(op.name);
    auto tf_op = tf_ops.find(key);
    if (tf_op == tf_ops.end()) tf_op = tf_ops.emplace(key, TfOpValue(op.scope, op.name)).first;
    builder->AddRefStat(event, xplane::kTfOpStat, tf_op->second);
    if (op.source != CostSource::kUnknown) {
      builder->AddStat(event, xplane::kFlopsStat, op.self_flops);
      builder->AddStat(event, xplane::kBytesAccessedStat, op.self_bytes);
    }
  }
}

}  // namespace analysis
}  // namespace neuronprof
