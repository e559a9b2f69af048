// c10d Work titles ("gloo:all_reduce") in the host plane. xprof reads an
// event name "a:b" as TF's "<op name>:<op type>" and keys
// framework_op_stats by the op name, so every "gloo:<collective>" would
// fold into one row named "gloo". The host plane therefore names a Work
// span's metadata "gloo/all_reduce:all_reduce" (one row per collective,
// typed by it) and keeps the title as its display_name, which our readers
// show (EventVisitor::DisplayName, the Chrome and Kineto writers).
// Inline name rules: libneuronprof_torch cannot call libneuronprof's hidden
// xplane symbols.
#ifndef NEURONPROF_SRC_XPLANE_COLLECTIVE_NAME_H_
#define NEURONPROF_SRC_XPLANE_COLLECTIVE_NAME_H_

#include <string>
#include <string_view>

namespace tensorflow {
namespace profiler {
class XPlane;
}  // namespace profiler
}  // namespace tensorflow

namespace neuronprof {
namespace xplane {

// The c10d backends whose Work titles are "<backend>:<collective>".
inline bool IsC10dBackend(std::string_view backend) {
  return backend == "gloo" || backend == "nccl" || backend == "mpi" || backend == "ucc";
}

// "gloo:all_reduce" -> "gloo/all_reduce:all_reduce"; "" when `title` is not
// a Work title (no c10d backend before its first ':', or nothing after).
inline std::string XprofCollectiveName(std::string_view title) {
  const size_t colon = title.find(':');
  if (colon == std::string_view::npos || colon + 1 == title.size() ||
      !IsC10dBackend(title.substr(0, colon))) {
    return {};
  }
  const std::string_view collective = title.substr(colon + 1);
  std::string name(title.substr(0, colon));
  name.append("/").append(collective).append(":").append(collective);
  return name;
}

// Renames the plane's Work-title event metadata as above, keeping each
// title as the metadata's display_name. Metadata that has a display_name
// already (renamed before, or another writer's) is left as it is.
void NameCollectivesForXprof(tensorflow::profiler::XPlane* plane);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_COLLECTIVE_NAME_H_
