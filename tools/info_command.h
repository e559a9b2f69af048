// `neuronprof info`: what a capture holds (hosts, planes, lines, event
// counts, warnings, errors), as text.
#ifndef NEURONPROF_TOOLS_INFO_COMMAND_H_
#define NEURONPROF_TOOLS_INFO_COMMAND_H_

#include <string>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace tools {

// The lines `info` prints after the file name.
std::string FormatInfo(const tensorflow::profiler::XSpace& space);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_INFO_COMMAND_H_
