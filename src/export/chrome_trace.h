// XSpace -> Chrome trace event format (JSON), which Perfetto UI and
// chrome://tracing open. Every plane becomes a process, every line a thread,
// every event a complete ("X") event whose args are its stats.
#ifndef NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_
#define NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_

#include <string>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace exporter {

std::string XSpaceToChromeTraceJson(const tensorflow::profiler::XSpace& space);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_
