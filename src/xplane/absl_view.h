// Debian's Abseil has its own string_view type: the one conversion from
// std::string_view for the Abseil string functions.
#ifndef NEURONPROF_SRC_XPLANE_ABSL_VIEW_H_
#define NEURONPROF_SRC_XPLANE_ABSL_VIEW_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace neuronprof {
namespace xplane {

inline absl::string_view AbslView(std::string_view text) { return {text.data(), text.size()}; }

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_ABSL_VIEW_H_
