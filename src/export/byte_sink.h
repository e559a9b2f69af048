// Where written bytes go, in order: a file (atomic_file.h), a gzip stream
// (gzip.h), a string, a count. Writers hand over bounded pieces, so no whole file is
// held in memory.
#ifndef NEURONPROF_SRC_EXPORT_BYTE_SINK_H_
#define NEURONPROF_SRC_EXPORT_BYTE_SINK_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace neuronprof {
namespace exporter {

class ByteSink {
 public:
  virtual ~ByteSink() = default;
  // The first error sticks: later calls return it and write nothing.
  virtual absl::Status Append(std::string_view bytes) = 0;
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
