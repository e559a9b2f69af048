// The operator table (PyProf's columns: layer, direction, op, params, calls,
// times, FLOPs, bytes, achieved FLOP/s) and the time share per framework op
// (the operator-framework pie of the Neuron plugin, as rows).
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_OP_TABLE_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_OP_TABLE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/ops/operator_events.h"

namespace neuronprof {
namespace analysis {

// All calls with the same (layer, direction, op, params).
struct OpTableRow {
  std::string layer;      // "" when no layer: marker encloses the op
  std::string direction;  // "fprop" / "bprop" / ""
  std::string op;
  std::string params;
  // The op's tensor-core dims and compute dtype (OpCost::matrix_*): the
  // same for every call, as they are part of params.
  std::vector<std::pair<char, int64_t>> matrix_dims;
  DType matrix_dtype = DType::kNone;
  int64_t calls = 0;
  int64_t total_ps = 0;  // inclusive of the ops it calls
  int64_t self_ps = 0;
  // Self costs summed over the calls whose cost is known (own or in
  // children); own_calls + in_children_calls + unknown_calls == calls.
  int64_t flops = 0;
  int64_t bytes = 0;
  int64_t own_calls = 0, in_children_calls = 0, unknown_calls = 0;
  // Device events the op's calls launched themselves (not those of the
  // ops nested in them, as self FLOPs), summed over every device.
  int64_t device_ps = 0;
  int64_t kernels = 0;
  int device_plane = -1;  // the plane of most of that time; -1: host only
  // flops / total time; 0 when no FLOPs.
  double FlopsPerSecond() const;
  // flops / device time; 0 when no FLOPs or no device time.
  double DeviceFlopsPerSecond() const;
};

// One framework op (by name) and its share of all operator self time.
struct OpShare {
  std::string op;
  int64_t calls = 0;
  int64_t self_ps = 0;
  double percent = 0;
};

struct OpTable {
  std::vector<OpTableRow> rows;  // by total time, longest first
  std::vector<OpShare> shares;   // by self time, largest first
  int64_t total_self_ps = 0;     // all operators; == the sum of shares
  int64_t total_flops = 0, total_bytes = 0;
  int64_t calls = 0, unknown_calls = 0;
  int64_t total_device_ps = 0;  // attributed device time of every row
  int64_t malformed_inputs = 0;
  std::string first_input_error;
};

// `device`, when given, adds each op's attributed device time and kernels.
OpTable BuildOpTable(const OperatorEvents& events, const DeviceEvents* device = nullptr);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_OP_TABLE_H_
