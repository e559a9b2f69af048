// The inputs of one framework operator, parsed from the collector's string
// stats (input_dims, input_types, input_values; see src/xplane/schema.h).
#ifndef NEURONPROF_SRC_ANALYSIS_OPS_OP_INPUTS_H_
#define NEURONPROF_SRC_ANALYSIS_OPS_OP_INPUTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace analysis {

// torch ScalarType names the collector writes for tensors.
enum class DType {
  kNone,
  kFloat,
  kDouble,
  kHalf,
  kBFloat16,
  kLong,
  kInt,
  kShort,
  kChar,
  kByte,
  kBool
};

// kNone for anything that is not a tensor dtype name ("Scalar", "").
DType ParseDType(std::string_view name);
const char* DTypeName(DType dtype);
// Bytes per element; 0 for kNone.
int64_t DTypeBytes(DType dtype);

struct OpInput {
  bool is_tensor = false;     // a tensor dtype was recorded at this position
  std::vector<int64_t> dims;  // tensor shape ([] for a 0-dim tensor)
  DType dtype = DType::kNone;
  std::string type;   // as recorded: "Float", "Scalar", ""
  std::string value;  // non-tensor value as recorded: "3", "[1, 1]", "None"

  int64_t Elements() const;  // product of dims (1 for a 0-dim tensor)
  int64_t Bytes() const { return Elements() * DTypeBytes(dtype); }
};

// Parses the three stats. `values` may be empty (then every value is "").
// InvalidArgument, naming the stat, when a string is malformed or the
// three disagree on the number of inputs.
absl::StatusOr<std::vector<OpInput>> ParseOpInputs(std::string_view dims, std::string_view types,
                                                   std::string_view values);

// Parses an int list value as the collector writes it ("[1, 1]", "[2]") or a
// single int ("3", applied to every dimension). False when it is neither.
bool ParseIntList(std::string_view value, std::vector<int64_t>* out);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_OPS_OP_INPUTS_H_
