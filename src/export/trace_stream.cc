#include "src/export/trace_stream.h"

#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "src/xplane/saturating.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/kineto_trace.h"

namespace neuronprof {
namespace exporter {
namespace {

using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;

// A plane's lines by (id, name): a fragment's line goes to the line it
// continues.
struct LineKey {
  int64_t id;
  std::string name;
  bool operator==(const LineKey& o) const { return id == o.id && name == o.name; }
  template <typename H>
  friend H AbslHashValue(H h, const LineKey& key) {
    return H::combine(std::move(h), key.id, key.name);
  }
};

}  // namespace

class TraceStream::Impl {
 public:
  Impl(TraceFormat format, ByteSink* sink) : format_(format), sink_(sink) {}

  absl::Status Append(const XSpace& fragment) {
    if (finished_) return absl::FailedPreconditionError("TraceStream: Append after Finish");
    for (const XPlane& plane : fragment.planes()) AppendPlane(plane);
    if (!seen_space_) {
      seen_space_ = true;
      // The space's own fields (hostnames, warnings, errors) come with the
      // first fragment.
      XSpace header = fragment;
      header.clear_planes();
      XSpace planes = std::move(space_);
      space_ = std::move(header);
      *space_.mutable_planes() = std::move(*planes.mutable_planes());
    }
    return absl::OkStatus();
  }

  absl::Status Finish() {
    if (finished_) return absl::FailedPreconditionError("TraceStream: Finish called twice");
    finished_ = true;
    return format_ == TraceFormat::kKineto ? WriteKinetoTrace(space_, sink_)
                                           : WriteChromeTrace(space_, sink_);
  }

 private:
  struct PlaneState {
    XPlane* plane;
    absl::flat_hash_map<LineKey, XLine*> lines;
  };

  // The fragment's events after those of the same plane (by name) and line
  // (by id and name); a new plane or line is added after the others.
  void AppendPlane(const XPlane& fragment) {
    auto [it, inserted] = planes_.try_emplace(fragment.name());
    PlaneState& state = it->second;
    if (inserted) {
      state.plane = space_.add_planes();
      *state.plane = fragment;
      for (XLine& line : *state.plane->mutable_lines()) {
        state.lines.try_emplace(LineKey{line.id(), line.name()}, &line);
      }
      return;
    }
    for (const XLine& line : fragment.lines()) {
      auto [at, fresh] = state.lines.try_emplace(LineKey{line.id(), line.name()}, nullptr);
      if (fresh) {
        // Pointers into a repeated field stay valid as it grows.
        at->second = state.plane->add_lines();
        *at->second = line;
        continue;
      }
      XLine& whole = *at->second;
      whole.mutable_events()->Reserve(whole.events_size() + line.events_size());
      for (const auto& event : line.events()) {
        auto* copy = whole.add_events();
        *copy = event;
        // Offsets are from the fragment's line timestamp.
        if (line.timestamp_ns() != whole.timestamp_ns()) {
          copy->set_offset_ps(SaturatingAdd(
              event.offset_ps(),
              SaturatingMul(SaturatingSub(line.timestamp_ns(), whole.timestamp_ns()), 1000)));
        }
      }
    }
  }

  const TraceFormat format_;
  ByteSink* const sink_;
  XSpace space_;
  absl::flat_hash_map<std::string, PlaneState> planes_;
  bool seen_space_ = false;
  bool finished_ = false;
};

TraceStream::TraceStream(TraceFormat format, ByteSink* sink)
    : impl_(std::make_unique<Impl>(format, sink)) {}
TraceStream::~TraceStream() = default;
absl::Status TraceStream::Append(const XSpace& fragment) { return impl_->Append(fragment); }
absl::Status TraceStream::Finish() { return impl_->Finish(); }

class TraceFileStream::Impl {
 public:
  Impl(TraceFormat format, AtomicFile file, bool gzip)
      : file_(std::move(file)),
        gzip_(gzip ? std::make_unique<GzipSink>(&file_) : nullptr),
        stream_(format, gzip_ ? static_cast<ByteSink*>(gzip_.get()) : &file_) {}

  absl::Status Append(const XSpace& fragment) { return stream_.Append(fragment); }
  absl::Status Finish() {
    if (absl::Status s = stream_.Finish(); !s.ok()) return s;
    if (gzip_ != nullptr) {
      if (absl::Status s = gzip_->Finish(); !s.ok()) return s;
    }
    return file_.Commit();
  }

 private:
  AtomicFile file_;  // Removed unless committed.
  std::unique_ptr<GzipSink> gzip_;
  TraceStream stream_;
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
