// XSpace -> Chrome trace event format (JSON), which Perfetto UI and
// chrome://tracing open. Every plane becomes a process, every line a thread,
// every event a complete ("X") event whose args are its stats (its own and
// its metadata's); flow arrows (launch -> device work, producer -> consumer)
// come after the events. The text is streamed: never held whole, and the
// capture may come in fragments (trace_stream.h): a whole XSpace is written
// as one fragment.
#ifndef NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_
#define NEURONPROF_SRC_EXPORT_CHROME_TRACE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "proto/xplane.pb.h"
#include "src/export/json_text.h"
#include "src/export/trace_stream.h"

namespace neuronprof {
namespace exporter {

// The trace of a capture fed in fragments (trace_stream.h's contract): each
// fragment's events are formatted when it comes, plane by plane and line by
// line; what crosses fragments (process and thread names written, the
// events that end flows, the warnings) is kept until Finish().
class ChromeTraceStream final : public TraceStream {
 public:
  explicit ChromeTraceStream(ByteSink* sink);  // `sink` must outlive it.
  ~ChromeTraceStream() override;
  size_t HeldItems() const override;

 private:
  absl::Status AppendFragment(const tensorflow::profiler::XSpace& fragment) override;
  absl::Status FinishTrace() override;

  class Writer;
  std::unique_ptr<Writer> writer_;
};

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
