#include "src/analysis/operator_annotator.h"

#include <cctype>
#include <memory>

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

void RemoveStats(const tensorflow::profiler::XPlane& plane,
                 tensorflow::profiler::XEvent* event,
                 std::initializer_list<std::string_view> names) {
  auto* stats = event->mutable_stats();
  for (int i = stats->size(); i-- > 0;) {
    auto it = plane.stat_metadata().find(stats->Get(i).metadata_id());
    if (it == plane.stat_metadata().end()) continue;
    for (std::string_view name : names) {
      if (it->second.name() == name) {
        stats->DeleteSubrange(i, 1);
        break;
      }
    }
  }
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
  for (const OperatorEvent& op : events.ops) {
    tensorflow::profiler::XPlane* plane = space->mutable_planes(op.plane);
    if (op.plane != builder_plane) {
      builder = std::make_unique<xplane::XPlaneBuilder>(plane);
      builder_plane = op.plane;
    }
    tensorflow::profiler::XEvent* event =
        plane->mutable_lines(op.line)->mutable_events(op.event);
    RemoveStats(*plane, event,
                {xplane::kOpScopeStat, xplane::kOpLayerStat, xplane::kTfOpStat,
                 xplane::kFlopsStat, xplane::kBytesAccessedStat});
    if (!op.scope.empty()) builder->AddStat(event, xplane::kOpScopeStat, op.scope);
    if (!op.layer.empty()) builder->AddStat(event, xplane::kOpLayerStat, op.layer);
    builder->AddStat(event, xplane::kTfOpStat, TfOpValue(op.scope, op.name));
    if (op.source != CostSource::kUnknown) {
      builder->AddStat(event, xplane::kFlopsStat, op.self_flops);
      builder->AddStat(event, xplane::kBytesAccessedStat, op.self_bytes);
    }
  }
}

}  // namespace analysis
}  // namespace neuronprof
