#include "src/export/trace_stream.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/kineto_trace.h"

namespace neuronprof {
namespace exporter {

using tensorflow::profiler::XSpace;

absl::Status TraceStream::Append(const XSpace& fragment) {
  if (finished_) return absl::FailedPreconditionError("TraceStream: Append after Finish");
  return AppendFragment(fragment);
}

absl::Status TraceStream::Finish() {
  if (finished_) return absl::FailedPreconditionError("TraceStream: Finish called twice");
  finished_ = true;
  return FinishTrace();
}

std::unique_ptr<TraceStream> NewTraceStream(TraceFormat format, ByteSink* sink) {
  if (format == TraceFormat::kChrome) return std::make_unique<ChromeTraceStream>(sink);
  return std::make_unique<KinetoTraceStream>(sink);
}

class TraceFileStream::Impl {
 public:
  Impl(TraceFormat format, AtomicFile file, bool gzip)
      : file_(std::move(file)),
        gzip_(gzip ? std::make_unique<GzipSink>(&file_) : nullptr),
        stream_(NewTraceStream(format, gzip_ ? static_cast<ByteSink*>(gzip_.get()) : &file_)) {}

  absl::Status Append(const XSpace& fragment) { return stream_->Append(fragment); }
  absl::Status Finish() {
    if (absl::Status s = stream_->Finish(); !s.ok()) return s;
    if (gzip_ != nullptr) {
      if (absl::Status s = gzip_->Finish(); !s.ok()) return s;
    }
    return file_.Commit();
  }

 private:
  AtomicFile file_;  // Removed unless committed.
  std::unique_ptr<GzipSink> gzip_;
  std::unique_ptr<TraceStream> stream_;
};

absl::StatusOr<std::unique_ptr<TraceFileStream>> TraceFileStream::Open(TraceFormat format,
                                                                       const std::string& path) {
  auto file = AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  const bool gzip = absl::EndsWith(path, ".gz");
  return std::unique_ptr<TraceFileStream>(
      new TraceFileStream(std::make_unique<Impl>(format, std::move(*file), gzip)));
}

TraceFileStream::TraceFileStream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
TraceFileStream::~TraceFileStream() = default;

absl::Status TraceFileStream::Append(const XSpace& fragment) { return impl_->Append(fragment); }
absl::Status TraceFileStream::Finish() { return impl_->Finish(); }

}  // namespace exporter
}  // namespace neuronprof
