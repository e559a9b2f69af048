// FLOPs and bytes of one framework operator, from its name and inputs, with
// PyProf's formulas (docs/OPERATORS.md lists what each op counts).
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_OP_COST_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_OP_COST_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/analysis/ops/op_inputs.h"

namespace neuronprof {
namespace analysis {

enum class Direction { kForward, kBackward };

struct OpCost {
  // The formula applied: flops and bytes hold its result. False for ops
  // without a formula or without the inputs it needs (no shapes recorded):
  // such ops are reported as unknown, never as zero.
  bool known = false;
  // The op's own work is only the ops it calls (autograd nodes such as
  // AddmmBackward0, dispatch wrappers such as aten::contiguous).
  bool container = false;
  int64_t flops = 0;   // an FMA counts as 2
  int64_t bytes = 0;   // memory read + written, algorithmic
  std::string params;  // PyProf-style, e.g. "M=128,N=64,K=784,Float"
  // GEMMs (mm, addmm, linear, bmm, matmul, ...) and convolutions: the dims
  // tensor cores tile (M, N, K; convs C and K, per group) and the compute
  // dtype, which the tensor-core recommendations read. Empty otherwise.
  std::vector<std::pair<char, int64_t>> matrix_dims;
  DType matrix_dtype = DType::kNone;
};

// The name without "aten::" and without an in-place '_' suffix ("add_" ->
// "add"); dunder forms ("__iadd__") map to the plain op.
std::string BaseOpName(std::string_view op_name);
// Autograd nodes: "AddmmBackward0", "autograd::engine::evaluate_function: ...",
// "torch::autograd::AccumulateGrad".
bool IsAutogradNodeName(std::string_view op_name);

// Aten ops are costed on their own inputs in either direction: libtorch
// records backward kernels (aten::mm, aten::threshold_backward) with their
// real shapes, so unlike PyProf nothing is borrowed from the forward op.
OpCost ComputeOpCost(std::string_view op_name, const std::vector<OpInput>& inputs,
                     Direction direction);

// True when a built-in formula (or container rule) names the op; else
// ComputeOpCost falls back to a registered one (custom_op_costs.h).
bool HasBuiltinOpCost(std::string_view op_name);

// "T=(64,784),Float" / "T=[(64,784),(784)],Float": every tensor input.
std::string GenericParams(const std::vector<OpInput>& inputs);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_OP_COST_H_
