// RegisterOpCost (public neuronprof/op_costs.h) over analysis's registry.
#include "neuronprof/op_costs.h"

#include <utility>

#include "src/analysis/ops/custom_op_costs.h"
#include "src/analysis/ops/op_inputs.h"

namespace neuronprof {

absl::Status RegisterOpCost(std::string_view op_name, OpCostFormula formula) {
  if (!formula) return analysis::RegisterCustomOpCost(op_name, nullptr);
  return analysis::RegisterCustomOpCost(
      op_name, [formula = std::move(formula)](const std::vector<analysis::OpInput>& recorded) {
        std::vector<OpCostInput> inputs(recorded.size());
        for (size_t i = 0; i < recorded.size(); ++i) {
          const analysis::OpInput& in = recorded[i];
          inputs[i].is_tensor = in.is_tensor;
          inputs[i].shape = in.dims;
          inputs[i].dtype = in.type;
          inputs[i].element_bytes = analysis::DTypeBytes(in.dtype);
          inputs[i].value = in.value;
        }
        const OpCostEstimate cost = formula(inputs);
        return std::make_pair(cost.flops, cost.bytes);
      });
}

}  // namespace neuronprof
