// The one JSON writer: strict JSON text (RFC 8259, what Python's json and
// Perfetto accept) formatted with fmt into a bounded buffer that is handed
// to a ByteSink whenever it fills, so a trace of any size is never held
// whole. Strings are escaped as valid UTF-8, NaN and infinities are null,
// times are microseconds printed exactly from integer nanoseconds. Reading
// JSON (and checking that text is strict JSON) is src/xplane/json_reader.h.
#ifndef NEURONPROF_SRC_EXPORT_JSON_TEXT_H_
#define NEURONPROF_SRC_EXPORT_JSON_TEXT_H_

#include <fmt/compile.h>
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "src/export/byte_sink.h"

namespace neuronprof {
namespace exporter {
namespace json {

// Formats JSON text into its buffer; the caller writes the structure
// (Raw for punctuation and keys it knows are plain, String for any text).
class Writer {
 public:
  // The buffer goes to *sink at a MaybeFlush() point once it holds
  // `flush_bytes` (0: the sink's PieceBytes(), e.g. a gzip sink's whole
  // blocks, which ByteSink::AppendBuffer takes without a copy), and at
  // Splice() and Finish(). `sink` must outlive the writer.
  explicit Writer(ByteSink* sink, size_t flush_bytes = 0);
  // A writer without a sink: it keeps all its text (text()) for another
  // writer to Splice, in `buffer` (emptied first; its capacity is reused,
  // so a large trace's pieces do not each fault in fresh pages).
  explicit Writer(fmt::memory_buffer&& buffer);

  // Copied in place while the buffer has room (the usual case: it is
  // reserved past the flush mark); fmt's append, out of line, otherwise.
  // A dozen times per event of a million-event trace.
  void Raw(std::string_view text) {
    const size_t size = buffer_.size();
    if (text.size() <= buffer_.capacity() - size) {
      std::memcpy(buffer_.data() + size, text.data(), text.size());
      buffer_.try_resize(size + text.size());
    } else {
      buffer_.append(text.data(), text.data() + text.size());
    }
  }
  void Char(char c) {
    const size_t size = buffer_.size();
    if (size < buffer_.capacity()) {
      buffer_.data()[size] = c;
      buffer_.try_resize(size + 1);
    } else {
      buffer_.push_back(c);
    }
  }
  // `text` as a quoted JSON string: control characters as \uXXXX (or \n,
  // \t, \r), '"' and '\' escaped, invalid UTF-8 replaced by U+FFFD.
  void String(std::string_view text);
  // Digits written in place (no format string to interpret, no copy).
  template <typename Integer>
  void Int(Integer value) {
    char* at = Room(kMaxIntChars);
    Commit(fmt::format_to(at, FMT_COMPILE("{}"), value));
  }
  // Shortest text that reads back as the same double; NaN and infinities
  // (not JSON) as null.
  void Double(double value);
  // ns / 1000 with 3 decimals: 1234 -> "1.234", -5 -> "-0.005"; exact for
  // every int64, INT64_MIN included.
  void Micros(int64_t ns);

  // A point where the text may be cut (between two events): hands the
  // buffer to the sink once it holds flush_bytes. After a sink error the
  // writer keeps formatting into the (then discarded) buffer; Finish()
  // returns that error.
  void MaybeFlush() {
    if (buffer_.size() >= flush_bytes_) FlushPieces();
  }
  // Text formatted elsewhere (another Writer's, on another thread) and
  // prepared for this writer's sink there (Prepare: for a gzip file,
  // compressed), handed to the sink after what this writer holds, without
  // copying it into the buffer. Call it where the text may be cut.
  void Splice(const PreparedBytes& prepared) {
    Flush();
    if (status_.ok()) status_ = sink_->AppendPrepared(prepared);
  }
  // Prepares `text` for Splice; safe on any thread while this writer is in
  // use elsewhere (it reads only the sink, which allows that).
  void Prepare(std::string_view text, PreparedBytes* prepared) const {
    sink_->Prepare(text, prepared);
  }
  // Hands over the rest; the first error of the sink, if any.
  absl::Status Finish();
  // The sink's first error so far (text still buffered is not yet handed).
  const absl::Status& status() const { return status_; }

  // Room for `bytes` more at the end of the buffer: where to write them
  // (then Commit(end of what was written)).
  char* Room(size_t bytes) {
    buffer_.try_reserve(buffer_.size() + bytes);
    return buffer_.data() + buffer_.size();
  }
  void Commit(const char* end) { buffer_.try_resize(static_cast<size_t>(end - buffer_.data())); }
  static constexpr size_t kMaxIntChars = 40;  // "-" and the digits of any integer to 128 bits

  // Without a sink: the text so far, and its buffer taken back for reuse.
  std::string_view text() const { return std::string_view(buffer_.data(), buffer_.size()); }
  fmt::memory_buffer TakeBuffer() { return std::move(buffer_); }

 private:
  void Flush();        // All of the buffer.
  void FlushPieces();  // What the sink takes as pieces (AppendBuffer).
  void Reserve();

  ByteSink* sink_;
  size_t flush_bytes_;
  fmt::memory_buffer buffer_;
  absl::Status status_;
};

// `text` as a quoted JSON string, as one std::string (for keys and names
// escaped once and written many times).
std::string Escaped(std::string_view text);

}  // namespace json
}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_JSON_TEXT_H_
