// Where written bytes go, in order: a file (atomic_file.h), a gzip stream
// (gzip.h), a string, a count. Writers hand over bounded pieces, so no whole file is
// held in memory.
#ifndef NEURONPROF_SRC_EXPORT_BYTE_SINK_H_
#define NEURONPROF_SRC_EXPORT_BYTE_SINK_H_

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace neuronprof {
namespace exporter {

// Text made ready for a sink ahead of its turn (ByteSink::Prepare), on the
// thread that formatted it: for a gzip sink, compressed there, so a
// writer's worker threads do the sink's work on their own text too.
// Reused from piece to piece (the buffer keeps its capacity).
struct PreparedBytes {
  std::string_view text;     // What was prepared; the caller keeps it.
  bool transformed = false;  // `bytes` are what the sink writes for it.
  std::unique_ptr<char[]> bytes;
  size_t capacity = 0;
  size_t size = 0;
  absl::Status status;  // Of the preparation.
};

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // The first error sticks: later calls return it and write nothing.
  virtual absl::Status Append(std::string_view bytes) = 0;
  // Prepares `text` for AppendPrepared; safe on any thread while the sink
  // is in use. By default nothing is done ahead: `text` is appended as is.
  virtual void Prepare(std::string_view text, PreparedBytes* prepared) const {
    prepared->text = text;
    prepared->transformed = false;
  }
  // Appends prepared text, after everything appended before it.
  virtual absl::Status AppendPrepared(const PreparedBytes& prepared) {
    return Append(prepared.text);
  }
  // Appends what `buffer` holds, or a part of it that a sink keeping whole
  // pieces (a gzip block) takes without a copy: its storage, leaving
  // storage of its own that holds the rest (to be appended first next
  // time, before what the caller adds to it). By default all of it, copied.
  virtual absl::Status AppendBuffer(fmt::memory_buffer* buffer) {
    absl::Status status = Append(std::string_view(buffer->data(), buffer->size()));
    buffer->clear();
    return status;
  }
  // The pieces a writer best hands over (json::Writer's flush mark).
  static constexpr size_t kDefaultPieceBytes = size_t{256} << 10;
  virtual size_t PieceBytes() const { return kDefaultPieceBytes; }
};

// Keeps everything in memory (fuzzers, and tests of the text itself).
class StringSink : public ByteSink {
 public:
  absl::Status Append(std::string_view bytes) override {
    text_.append(bytes.data(), bytes.size());
    return absl::OkStatus();
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

// Keeps nothing: the bytes are only counted (benchmarks and tests of a
// writer's own memory and speed).
class CountingSink : public ByteSink {
 public:
  absl::Status Append(std::string_view bytes) override {
    bytes_ += bytes.size();
    return absl::OkStatus();
  }
  size_t bytes() const { return bytes_; }

 private:
  size_t bytes_ = 0;
};

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_BYTE_SINK_H_
