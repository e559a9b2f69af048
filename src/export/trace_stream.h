// The Chrome and Kineto trace writers fed one fragment of a capture at a
// time, so that no whole XSpace of a large capture is held (issue 24: 10M
// host markers written with peak RSS <= 1.5x their records).
//
// A fragment is a small XSpace with the capture's planes (same names, same
// order, same ids), each with the whole plane's metadata (event and stat
// metadata, plane stats, line ids and names) and whose lines hold only the
// next events of that line, in the line's time order. A line may be empty
// or absent in a fragment; a plane that first appears in a later fragment
// is added after the planes seen so far. Nothing of a fragment is kept once
// Append() returns: it may be freed or reused.
//
// Each fragment's events are formatted when it comes (on the writers'
// worker threads, fragment by fragment), so the text lists the capture's
// events fragment after fragment, plane by plane and line by line within
// one; the whole-XSpace writers (WriteChromeTrace / WriteKinetoTrace) write
// the capture as one fragment. A capture cut any way gives the same events,
// names, ids and links as the whole writer's, in another order
// (tests/export/trace_stream_test.cc cuts captures into fragments of 1, 7
// and 64K events, with lines first appearing late and empty fragments).
//
// The header's facts (start time, hostnames, warnings, devices, rank, pid)
// come from the first fragment, which must carry every plane (its lines may
// be empty). Kept across fragments: the process and thread names written,
// the step count and the next External id, and the events whose links may
// cross fragments: flow ends, runtime calls and device work (written at
// Finish), and, in a capture with runtime calls, each host span's times (a
// call takes the External id of the span around it). For host markers that
// is O(planes + lines), never one entry per marker (HeldItems() counts it).
#ifndef NEURONPROF_SRC_EXPORT_TRACE_STREAM_H_
#define NEURONPROF_SRC_EXPORT_TRACE_STREAM_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "proto/xplane.pb.h"
#include "src/export/byte_sink.h"

namespace neuronprof {
namespace exporter {

enum class TraceFormat {
  kChrome,  // chrome_trace.h: Perfetto UI, chrome://tracing.
  kKineto,  // kineto_trace.h: the PyTorch plugin, HTA.
};

// One format's writer fed fragment by fragment: ChromeTraceStream
// (chrome_trace.h) and KinetoTraceStream (kineto_trace.h) are the two;
// NewTraceStream makes either. The trace's JSON text goes to a ByteSink in
// pieces as fragments come.
class TraceStream {
 public:
  TraceStream() = default;
  TraceStream(const TraceStream&) = delete;
  TraceStream& operator=(const TraceStream&) = delete;
  virtual ~TraceStream() = default;

  // Formats the fragment's events (see above); the sink's first error.
  absl::Status Append(const tensorflow::profiler::XSpace& fragment);
  // Writes what crosses fragments and the trailer; the sink's first error.
  // Call it once, after the last Append().
  absl::Status Finish();
  // What the stream holds between fragments (for tests): the planes and
  // lines, the threads named, and the events and spans that links need
  // (flow ends, runtime calls, device work, host spans around calls);
  // never one per host marker.
  virtual size_t HeldItems() const = 0;

 protected:
  virtual absl::Status AppendFragment(const tensorflow::profiler::XSpace& fragment) = 0;
  virtual absl::Status FinishTrace() = 0;

 private:
  bool finished_ = false;
};

// The writer of `format` into `sink`, which must outlive it.
std::unique_ptr<TraceStream> NewTraceStream(TraceFormat format, ByteSink* sink);

// The same into a file written atomically (atomic_file.h), gzipped when
// `path` ends in ".gz" (gzip.h's GzipSink): nothing is left under `path`
// unless Finish() succeeds.
class TraceFileStream {
 public:
  static absl::StatusOr<std::unique_ptr<TraceFileStream>> Open(TraceFormat format,
                                                               const std::string& path);
  ~TraceFileStream();  // Without a successful Finish(), the file is removed.

  absl::Status Append(const tensorflow::profiler::XSpace& fragment);
  absl::Status Finish();  // Writes the rest and renames the file into place.

 private:
  class Impl;
  explicit TraceFileStream(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_TRACE_STREAM_H_
