// Translations from neuronprof's XSpace stat values to the argument forms
// that Kineto traces carry (and the PyTorch TensorBoard plugin / HTA read):
// dtype spellings, kernel launch properties, compute capability.
#ifndef NEURONPROF_SRC_EXPORT_KINETO_ARGS_H_
#define NEURONPROF_SRC_EXPORT_KINETO_ARGS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace neuronprof {
namespace exporter {
namespace kineto {

// torch ScalarType name ("Float", "BFloat16", "Long") -> the C++ type name
// Kineto writes in "Input type" ("float", "c10::BFloat16", "long int").
// "Scalar" and names it does not know are returned unchanged (a view of
// `scalar_type`).
std::string_view KinetoTypeName(std::string_view scalar_type);

// "Float,Scalar,Float" -> {"float", "Scalar", "float"}; "" -> {}. Views of
// `input_types` or of static names: nothing allocated for 8 inputs or fewer
// (once per operator of a large trace).
absl::InlinedVector<std::string_view, 8> KinetoInputTypes(std::string_view input_types);

// c10::DeviceType numbers, as torch writes "Device Type" in [memory]
// events. The PyTorch plugin reads 0 and 1; other accelerators are
// PrivateUse1, as torch reports an out-of-tree backend.
inline constexpr int64_t kTorchCpu = 0;
inline constexpr int64_t kTorchCuda = 1;
inline constexpr int64_t kTorchPrivateUse1 = 20;

// The c10::DeviceType of a memory event, from its memory_device_type stat
// ("CPU", "CUDA", "NPU"), else from its allocator name ("cpu", "cuda:0").
int64_t TorchDeviceType(std::string_view memory_device_type, std::string_view allocator);

}  // namespace kineto
}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_KINETO_ARGS_H_
