// Adds the analysis results to a built host plane, so that files carry them
// and xprof's operator tools list the ops.
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_OPERATOR_ANNOTATOR_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_OPERATOR_ANNOTATOR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/ops/operator_events.h"

namespace neuronprof {
namespace analysis {

// For every operator event (framework stat) on "/host:*" planes, sets the
// stats scope and layer (when non-empty), tf_op, and flops /
// bytes_accessed (the self cost; absent when unknown). Replaces earlier
// values of these stats, so running it twice changes nothing.
void AnnotateOperatorEvents(tensorflow::profiler::XSpace* space);
// The same from `events`, this space's CollectOperatorEvents taken before
// (a walk that only reads the space, so it may run beside other readers).
void AnnotateOperatorEvents(const OperatorEvents& events, tensorflow::profiler::XSpace* space);

// The same in two steps. Planning makes every metadata id the stats refer
// to (it grows the planes' metadata, so nothing else may touch them);
// applying only adds stats to the operators' events, so its parts (the
// ops cut into `parts` runs) may run side by side.
class PlaneAnnotator;
class OperatorAnnotation {  // The ids made, per plane.
 public:
  OperatorAnnotation();
  ~OperatorAnnotation();
  OperatorAnnotation(OperatorAnnotation&&) noexcept;
  OperatorAnnotation& operator=(OperatorAnnotation&&) noexcept;

 private:
  friend OperatorAnnotation PlanOperatorAnnotation(const OperatorEvents&,
                                                   tensorflow::profiler::XSpace*);
  friend void ApplyOperatorAnnotation(const OperatorEvents&, const OperatorAnnotation&, int, int,
                                      tensorflow::profiler::XSpace*);
  std::vector<std::unique_ptr<PlaneAnnotator>> planes_;  // By plane index; null: no ops.
};
OperatorAnnotation PlanOperatorAnnotation(const OperatorEvents& events,
                                          tensorflow::profiler::XSpace* space);
void ApplyOperatorAnnotation(const OperatorEvents& events, const OperatorAnnotation& annotation,
                             int part, int parts, tensorflow::profiler::XSpace* space);

// The tf_op value: "<scope>/<op>:<type>" in the form xprof's
// framework_op_stats parses (tests/interop/NOTES.md, "Operator events"):
// type = the op name with "::" -> "__" ("aten__addmm", "AddmmBackward0");
// operation = scope + op in TF op-name characters.
std::string TfOpValue(std::string_view scope, std::string_view op_name);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_OPERATOR_ANNOTATOR_H_
