// Formulas registered at run time for custom operators (public
// neuronprof/op_costs.h), by exact op name; ComputeOpCost's fallback.
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_CUSTOM_OP_COSTS_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_CUSTOM_OP_COSTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "src/analysis/ops/op_inputs.h"

namespace neuronprof {
namespace analysis {

// (flops, bytes) from the recorded inputs.
using CustomCostFormula = std::function<std::pair<int64_t, int64_t>(const std::vector<OpInput>&)>;

// InvalidArgument for an empty name or formula; AlreadyExists for a name
// registered before or with a built-in formula.
absl::Status RegisterCustomOpCost(std::string_view op_name, CustomCostFormula formula);

// The registered formula's (flops, bytes) for `op_name`, or nullopt.
std::optional<std::pair<int64_t, int64_t>> CustomOpCost(std::string_view op_name,
                                                        const std::vector<OpInput>& inputs);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_CUSTOM_OP_COSTS_H_
