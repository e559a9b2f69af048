// XSpace -> Chrome trace event format (JSON), which Perfetto UI and
// chrome://tracing open. Every plane becomes a process, every line a thread,
// every event a complete ("X") event whose args are its stats (its own and
// its metadata's). The text is streamed: never held whole.
#ifndef NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_
#define NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_

#include <string>

#include "absl/status/status.h"
#include "proto/xplane.pb.h"
#include "src/export/json_text.h"

namespace neuronprof {
namespace exporter {

// The trace's JSON text, handed to `sink` in pieces of about 256 KiB; the
// sink's first error.
absl::Status WriteChromeTrace(const tensorflow::profiler::XSpace& space, ByteSink* sink);
// Written atomically to `path`, gzipped when it ends in ".gz"
// (WriteFileStreamed); on error nothing is left under `path`.
absl::Status WriteChromeTraceFile(const tensorflow::profiler::XSpace& space,
                                  const std::string& path);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_
