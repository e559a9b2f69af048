#include "src/export/xplane_stream.h"

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/export/atomic_file.h"
#include "src/export/xspace_file.h"

namespace neuronprof {
namespace exporter {
namespace {

// Field numbers of xplane.proto's nested messages.
constexpr uint32_t kSpacePlanesField = 1;
constexpr uint32_t kPlaneLinesField = 3;
constexpr uint32_t kLineEventsField = 4;
// A length as a 5-byte varint: up to 2^35 - 1, past protobuf's 2 GiB limit.
constexpr size_t kLengthBytes = 5;
constexpr size_t kFlushBytes = size_t{32} << 10;  // Of the write buffer.

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// A length-delimited field's tag.
void AppendTag(uint32_t field, std::string* out) { AppendVarint(field << 3 | 2, out); }

// `message` as field `field` of its parent.
void AppendMessage(uint32_t field, const google::protobuf::MessageLite& message, std::string* out) {
  AppendTag(field, out);
  const size_t size = message.ByteSizeLong();
  AppendVarint(size, out);
  const size_t at = out->size();
  out->resize(at + size);
  message.SerializeWithCachedSizesToArray(reinterpret_cast<uint8_t*>(out->data() + at));
}

// The XPlaneSink onto the file: a buffer of at most ~kFlushBytes, and the
// places of the lengths still open (the plane's, the line's).
class FileSink : public xplane::XPlaneSink {
 public:
  explicit FileSink(AtomicFile* file) : file_(file) {}

  // Writes `message` whole, as field `field` of the space.
  void AppendSpaceField(uint32_t field, const google::protobuf::MessageLite& message) {
    AppendMessage(field, message, &buffer_);
    MaybeFlush();
  }
  // The space's next fields, serialized (their tags included).
  void AppendBytes(std::string_view bytes) {
    buffer_.append(bytes.data(), bytes.size());
    MaybeFlush();
  }
  // The streamed plane starts.
  void OpenPlane() { Open(kSpacePlanesField); }

  absl::Status AddEvents(
      const google::protobuf::RepeatedPtrField<tensorflow::profiler::XEvent>& events) override {
    if (!line_open_) OpenLine();
    for (const tensorflow::profiler::XEvent& event : events) {
      AppendMessage(kLineEventsField, event, &buffer_);
    }
    MaybeFlush();
    return status_;
  }
  absl::Status EndLine(const tensorflow::profiler::XLine& line) override {
    if (!line_open_) OpenLine();
    line.AppendPartialToString(&buffer_);  // Its fields, its events not among them.
    line_open_ = false;
    Close();
    return status_;
  }
  absl::Status EndPlane(const tensorflow::profiler::XPlane& plane) override {
    plane.AppendPartialToString(&buffer_);
    Close();
    MaybeFlush();
    return status_;
  }

  // Writes what is buffered; the first error.
  absl::Status Finish() {
    if (status_.ok() && !open_.empty()) status_ = absl::InternalError("a message was left open");
    Flush();
    return status_;
  }

 private:
  uint64_t offset() const { return flushed_ + buffer_.size(); }

  void OpenLine() {
    Open(kPlaneLinesField);
    line_open_ = true;
  }
  // A field's tag and a placeholder for its length.
  void Open(uint32_t field) {
    AppendTag(field, &buffer_);
    open_.push_back(offset());
    buffer_.append(kLengthBytes, '\0');
  }
  // The innermost open field ends here: its length goes into its place.
  void Close() {
    const uint64_t at = open_.back();
    open_.pop_back();
    const uint64_t length = offset() - at - kLengthBytes;
    if (length > static_cast<uint64_t>(kMaxXSpaceFileBytes)) {
      if (status_.ok()) {
        status_ = absl::ResourceExhaustedError(absl::StrCat(
            "a streamed message of ", length, " bytes is over protobuf's limit of 2 GiB"));
      }
      return;
    }
    char bytes[kLengthBytes];
    for (size_t i = 0; i < kLengthBytes; ++i) {
      const uint8_t more = i + 1 < kLengthBytes ? 0x80 : 0;
      bytes[i] = static_cast<char>(((length >> (7 * i)) & 0x7f) | more);
    }
    if (at >= flushed_) {
      std::memcpy(buffer_.data() + (at - flushed_), bytes, kLengthBytes);
    } else if (status_.ok()) {
      status_ = file_->Overwrite(at, std::string_view(bytes, kLengthBytes));
    }
  }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    if (status_.ok()) status_ = file_->Append(buffer_);
    flushed_ += buffer_.size();
    buffer_.clear();
  }

  AtomicFile* const file_;
  std::string buffer_;
  uint64_t flushed_ = 0;        // Bytes handed to the file.
  std::vector<uint64_t> open_;  // Offsets of the open fields' lengths.
  bool line_open_ = false;
  absl::Status status_;
};

}  // namespace

absl::Status WriteXSpaceStreamed(const tensorflow::profiler::XSpace& space,
                                 const StreamedPlane& plane, const std::string& path) {
  auto file = AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  FileSink sink(&*file);
  for (const tensorflow::profiler::XPlane& before : space.planes()) {
    sink.AppendSpaceField(kSpacePlanesField, before);
  }
  sink.OpenPlane();
  if (absl::Status s = plane(&sink); !s.ok()) return s;
  tensorflow::profiler::XSpace rest;  // Warnings, errors, host names.
  *rest.mutable_errors() = space.errors();
  *rest.mutable_warnings() = space.warnings();
  *rest.mutable_hostnames() = space.hostnames();
  sink.AppendBytes(rest.SerializeAsString());
  if (absl::Status s = sink.Finish(); !s.ok()) return s;
  return file->Commit();
}

}  // namespace exporter
}  // namespace neuronprof
