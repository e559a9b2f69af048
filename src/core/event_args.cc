#include "src/core/event_args.h"

#include <cstring>

#include "neuronprof/trace.h"

namespace neuronprof {
namespace core {
namespace {

// Writes into up to `capacity` bytes at `begin` and counts every byte, so
// that an encoding that does not fit says how large it is.
class ArenaWriter {
 public:
  ArenaWriter(char* begin, size_t capacity) : begin_(begin), capacity_(capacity) {}
  void PutBytes(const void* data, size_t size) {
    if (size != 0 && size_ <= capacity_ && size <= capacity_ - size_) {
      std::memcpy(begin_ + size_, data, size);
    }
    size_ += size;
  }
  void PutKind(char kind) { PutBytes(&kind, 1); }
  // Lengths always fit: an encoding is written only if it fits one block.
  void PutText(std::string_view text) {
    const auto length = static_cast<uint32_t>(text.size());
    PutBytes(&length, sizeof(length));
    PutBytes(text.data(), text.size());
  }
  template <typename T>
  void PutValue(T value) {
    static_assert(sizeof(T) == 8, "numbers are stored as 8 bytes");
    PutBytes(&value, sizeof(value));
  }
  size_t size() const { return size_; }

 private:
  char* begin_;
  size_t capacity_;
  size_t size_ = 0;
};

char KindChar(TraceArg::Kind kind) {
  switch (kind) {
    case TraceArg::Kind::kInt: return 'i';
    case TraceArg::Kind::kUint: return 'u';
    case TraceArg::Kind::kDouble: return 'd';
    case TraceArg::Kind::kString: break;
  }
  return 's';
}

void EncodeArg(const TraceArg& arg, ArenaWriter* out) {
  out->PutKind(KindChar(arg.kind()));
  out->PutText(arg.key());
  switch (arg.kind()) {
    case TraceArg::Kind::kInt: out->PutValue(arg.int_value()); break;
    case TraceArg::Kind::kUint: out->PutValue(static_cast<uint64_t>(arg.int_value())); break;
    case TraceArg::Kind::kDouble: out->PutValue(arg.double_value()); break;
    case TraceArg::Kind::kString: out->PutText(arg.string_value()); break;
  }
}

// Reads the encoding back; every Take fails (and stays failed) on a short
// input.
class ArgReader {
 public:
  explicit ArgReader(std::string_view rest) : rest_(rest) {}
  bool done() const { return rest_.empty(); }
  bool Take(void* out, size_t size) {
    if (rest_.size() < size) return false;
    std::memcpy(out, rest_.data(), size);
    rest_.remove_prefix(size);
    return true;
  }
  bool TakeText(std::string_view* out) {
    uint32_t length = 0;
    if (!Take(&length, sizeof(length)) || rest_.size() < length) return false;
    *out = rest_.substr(0, length);
    rest_.remove_prefix(length);
    return true;
  }

 private:
  std::string_view rest_;
};

}  // namespace

size_t EncodeMarker(char* begin, size_t capacity, const MarkerText& marker) {
  ArenaWriter out(begin, capacity);
  out.PutBytes(marker.name.data(), marker.name.size());
  for (size_t i = 0; i < marker.num_args; ++i) EncodeArg(marker.args[i], &out);
  for (size_t i = 0; i < marker.num_more_args; ++i) {
    EncodeArg(marker.more_args[i], &out);
  }
  return out.size();
}

std::string_view PlainName(const internal::EventRecord& record) {
  if (record.args_offset != 0) {
    return std::string_view(record.name, record.args_offset - 1);
  }
  // Literal names: stop at a NUL in case the array was longer than its text.
  return std::string_view(record.name,
                          strnlen(record.name, record.name_length));
}

void DecodeArgs(const internal::EventRecord& record, std::vector<DecodedArg>* out) {
  out->clear();
  if (record.args_offset == 0 || record.args_offset - 1 > record.name_length) return;
  ArgReader in(std::string_view(record.name + record.args_offset - 1,
                                record.name_length - (record.args_offset - 1)));
  while (!in.done()) {
    DecodedArg arg;
    if (!in.Take(&arg.kind, 1) || !in.TakeText(&arg.key)) return;
    bool ok = false;
    switch (arg.kind) {
      case 'i': ok = in.Take(&arg.int_value, 8); break;
      case 'u': ok = in.Take(&arg.uint_value, 8); break;
      case 'd': ok = in.Take(&arg.double_value, 8); break;
      case 's': ok = in.TakeText(&arg.string_value); break;
      default: break;
    }
    if (!ok) return;
    out->push_back(arg);
  }
}

}  // namespace core
}  // namespace neuronprof
