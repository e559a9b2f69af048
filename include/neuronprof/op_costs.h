// FLOP and byte formulas for custom operators (PyProf's extension point).
//
//   neuronprof::RegisterOpCost("myops::fused_gelu",
//       [](const std::vector<neuronprof::OpCostInput>& in) {
//         const int64_t n = in.at(0).Elements();
//         return neuronprof::OpCostEstimate{20 * n, 2 * n * in.at(0).element_bytes};
//       });
//
// An op recorded with its shapes (TorchOperatorOptions::record_shapes) whose
// name has a registered formula gets that formula's FLOPs and bytes in the
// capture (the `flops` / `bytes_accessed` stats), the summary's op table,
// the roofline and MFU, where it would otherwise show "-". Registered
// formulas apply to ops without a built-in one (docs/OPERATORS.md), in
// captures that end after the registration; `neuronprof summary` of a file
// reads the costs the capture wrote.
//
// Thread-safety: RegisterOpCost may be called from any thread, at any time.
// Formulas run when a capture ends (in Profiler::Stop(), a flight-recorder
// dump or a capture server's response), never on the recording hot path;
// a long line of ops is walked in parts on several threads, but the calls
// of one formula never overlap, so a formula may keep state (a memo map)
// without a lock of its own. Different formulas may run at the same time.
#ifndef NEURONPROF_OP_COSTS_H_
#define NEURONPROF_OP_COSTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "neuronprof/export.h"

namespace neuronprof {

// One recorded input of the op, in call order.
struct OpCostInput {
  bool is_tensor = false;
  std::vector<int64_t> shape;  // tensors; [] for a 0-dim tensor
  std::string dtype;           // "Float", "BFloat16", ...; "Scalar" or "" for others
  int64_t element_bytes = 0;   // 0 when not a tensor of a known dtype
  std::string value;           // non-tensor values as recorded: "3", "[1, 1]", "None"

  int64_t Elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

struct OpCostEstimate {
  int64_t flops = 0;  // an FMA counts as 2
  int64_t bytes = 0;  // memory read + written
};

using OpCostFormula = std::function<OpCostEstimate(const std::vector<OpCostInput>& inputs)>;

// Registers `formula` for ops named exactly `op_name` ("myops::fused_gelu").
// InvalidArgument for an empty name or formula; AlreadyExists when the name
// has a formula already (built-in or registered). Thread-safety: see the
// top of this file (one formula's calls never overlap).
NEURONPROF_API absl::Status RegisterOpCost(std::string_view op_name, OpCostFormula formula);

}  // namespace neuronprof

#endif  // NEURONPROF_OP_COSTS_H_
