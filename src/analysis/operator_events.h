// Framework operator events of an XSpace, nested and costed: the one walk
// over host planes that the annotator, the op table and the step breakdown
// share.
//
// No double counting: an op's formula cost is its *self* cost only when no
// operator it calls (any descendant) has a known, non-zero formula cost;
// otherwise its work is counted in those descendants and its self cost is
// 0 (aten::linear -> aten::addmm: the addmm carries 2·M·N·K). Totals sum
// self costs.
#ifndef NEURONPROF_SRC_ANALYSIS_OPERATOR_EVENTS_H_
#define NEURONPROF_SRC_ANALYSIS_OPERATOR_EVENTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/analysis/op_cost.h"

namespace neuronprof {
namespace analysis {

enum class CostSource {
  kOwn,         // self cost = the op's formula
  kInChildren,  // counted in the ops it calls; self cost 0
  kUnknown,     // no formula, or the inputs it needs were not recorded
};
std::string_view CostSourceName(CostSource source);  // "own", "in_children", "unknown"

struct OperatorEvent {
  int plane = 0, line = 0, event = 0;  // indices into the XSpace
  std::string name;                     // "aten::addmm"
  std::string direction;                // "fprop", "bprop", "" when not recorded
  bool has_seq = false;
  int64_t seq = 0;
  int64_t start_ps = 0, duration_ps = 0;
  int64_t self_ps = 0;                  // minus the directly nested operators
  std::string scope;                    // enclosing markers, '/'-joined
  std::string layer;                    // enclosing "layer:" markers, ':'-joined
  OpCost formula;
  CostSource source = CostSource::kUnknown;
  int64_t self_flops = 0, self_bytes = 0;
  int parent = -1;                      // enclosing operator, index into ops
};

struct OperatorEvents {
  std::vector<OperatorEvent> ops;  // per line, parents before children
  int64_t malformed_inputs = 0;    // ops whose input stats did not parse
  std::string first_input_error;
};

// Reads a stat of `event` (or of its metadata) as text; false when absent.
bool EventStatText(const tensorflow::profiler::XPlane& plane,
                   const tensorflow::profiler::XEvent& event, std::string_view name,
                   std::string* out);
// Reads an integer stat (int64 or uint64); false when absent.
bool EventStatInt(const tensorflow::profiler::XPlane& plane,
                  const tensorflow::profiler::XEvent& event, std::string_view name,
                  int64_t* out);
// Events of one line in nesting order (start, then longer first).
std::vector<int> SortedEventIndices(const tensorflow::profiler::XLine& line);

// Every operator (event with the framework stat) on planes named "/host:*".
OperatorEvents CollectOperatorEvents(const tensorflow::profiler::XSpace& space);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPERATOR_EVENTS_H_
