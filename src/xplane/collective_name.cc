#include "src/xplane/collective_name.h"

#include <utility>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

void NameCollectivesForXprof(tensorflow::profiler::XPlane* plane) {
  for (auto& [id, metadata] : *plane->mutable_event_metadata()) {
    if (!metadata.display_name().empty()) continue;
    std::string name = XprofCollectiveName(metadata.name());
    if (name.empty()) continue;
    metadata.set_display_name(metadata.name());
    metadata.set_name(std::move(name));
  }
}

}  // namespace xplane
}  // namespace neuronprof
