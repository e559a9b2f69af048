// XSpace -> the Kineto trace JSON that torch.profiler writes
// (<worker>.pt.trace.json), read by the PyTorch Profiler TensorBoard plugin
// (torch-tb-profiler) and Holistic Trace Analysis.
//
// Mapping (facts in ../shared/reference/viewer_formats.md, section A):
//   /host:CPU operators (stat framework)  -> cat "cpu_op" with "External id",
//        "Input Dims", "Input type", "Sequence number", "Fwd thread id"
//   /host:CPU step markers (stat _r)      -> cat "cpu_op" "ProfilerStep#<n>"
//   /host:CPU other markers               -> cat "user_annotation"
//   /host:CUPTI, /host:<TYPE>-runtime     -> cat "Runtime" ("External id" of
//        the innermost operator, else marker, around the call; "correlation")
//   /device:<TYPE>:<n>                    -> cat "kernel" / "Memcpy" /
//        "Memset", pid n, tid "stream <s>"
//   forward op <-> backward op, same seq  -> flow pairs in both "fwdbwd"
//        (plugin after 0.4.3, libkineto) and "forward_backward" (0.4.3)
// The categories "Runtime", "Memcpy", "Memset" are the legacy spellings the
// last PyPI plugin (0.4.3) maps; newer readers match them case-insensitively.
#ifndef NEURONPROF_SRC_EXPORT_KINETO_TRACE_H_
#define NEURONPROF_SRC_EXPORT_KINETO_TRACE_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "proto/xplane.pb.h"
#include "src/export/json_text.h"
#include "src/export/trace_stream.h"

namespace neuronprof {
namespace exporter {

inline constexpr char kPyTorchTraceSuffix[] = ".pt.trace.json.gz";

// The trace of a capture fed in fragments (trace_stream.h's contract): each
// fragment's host events are formatted when it comes (External ids numbered
// thread by thread within a fragment, fragment after fragment; steps
// numbered across fragments). Runtime calls, device work and the flows,
// which link events of any fragment, are kept (they are few: launches,
// device work, flow ends) and written at Finish(); host spans are kept only
// in a capture with runtime calls, to find the span around each call.
class KinetoTraceStream final : public TraceStream {
 public:
  explicit KinetoTraceStream(ByteSink* sink);  // `sink` must outlive it.
  ~KinetoTraceStream() override;
  size_t HeldItems() const override;

 private:
  absl::Status AppendFragment(const tensorflow::profiler::XSpace& fragment) override;
  absl::Status FinishTrace() override;

  class Writer;
  std::unique_ptr<Writer> writer_;
};

// The trace's JSON text, handed to `sink` in pieces of about 256 KiB; the
// sink's first error. The capture is written as one fragment.
absl::Status WriteKinetoTrace(const tensorflow::profiler::XSpace& space, ByteSink* sink);
// Written atomically to `path`, gzipped when it ends in ".gz"
// (WriteFileStreamed); on error nothing is left under `path`.
absl::Status WriteKinetoTraceFile(const tensorflow::profiler::XSpace& space,
                                  const std::string& path);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_KINETO_TRACE_H_
