// The text of `neuronprof info` (info_command.h): what a capture holds
// (hosts, planes, lines, event counts, warnings, errors). Apart from the
// command so that the fuzzers run it without CLI11.
#ifndef NEURONPROF_TOOLS_INFO_TEXT_H_
#define NEURONPROF_TOOLS_INFO_TEXT_H_

#include <string>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace tools {

// The lines `info` prints after the file name.
std::string FormatInfo(const tensorflow::profiler::XSpace& space);

}  // namespace tools
}  // namespace neuronprof

#endif  // NEURONPROF_TOOLS_INFO_TEXT_H_
