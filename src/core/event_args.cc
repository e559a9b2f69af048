#include "src/core/event_args.h"

#include <cstring>

#include "neuronprof/trace.h"

namespace neuronprof {
namespace core {
namespace {

char KindChar(TraceArg::Kind kind) {
  switch (kind) {
    case TraceArg::Kind::kInt:
      return 'i';
    case TraceArg::Kind::kUint:
      return 'u';
    case TraceArg::Kind::kDouble:
      return 'd';
    case TraceArg::Kind::kString:
      break;
  }
  return 's';
}

constexpr size_t kLengthBytes = sizeof(uint32_t);
constexpr size_t kNumberBytes = 8;

size_t EncodedSize(const TraceArg& arg) {
  const size_t value = arg.kind() == TraceArg::Kind::kString
                           ? kLengthBytes + arg.string_value().size()
                           : kNumberBytes;
  return 1 + kLengthBytes + arg.key().size() + value;
}

// Unchecked writes: EncodeMarker sizes the whole encoding and checks it
// against the room left before writing the first byte, so the per-piece
// bounds checks (most of an argument's cost on the allocator's path) go.
// The writers are neuronprof/internal/typed_args.h's.
using internal::CopyBytes;
using internal::PutEncodedText;

inline char* PutArg(char* out, const TraceArg& arg) {
  *out++ = KindChar(arg.kind());
  out = PutEncodedText(out, arg.key());
  switch (arg.kind()) {
    case TraceArg::Kind::kInt:
    case TraceArg::Kind::kUint:  // kUint keeps its bit pattern.
      return internal::PutEncodedNumber(out, static_cast<uint64_t>(arg.int_value()));
    case TraceArg::Kind::kDouble: {
      uint64_t bits;
      const double value = arg.double_value();
      std::memcpy(&bits, &value, kNumberBytes);
      return internal::PutEncodedNumber(out, bits);
    }
    case TraceArg::Kind::kString:
      break;
  }
  return PutEncodedText(out, arg.string_value());
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
  size_t size = marker.name.size();
  for (size_t i = 0; i < marker.num_reserved; ++i)
    size += internal::EncodedSize(marker.reserved[i]);
  for (size_t i = 0; i < marker.num_args; ++i) size += EncodedSize(marker.args[i]);
  for (size_t i = 0; i < marker.num_more_args; ++i) size += EncodedSize(marker.more_args[i]);
  if (size > capacity || size == 0) return size;
  char* out = begin;
  CopyBytes(out, marker.name.data(), marker.name.size());
  out += marker.name.size();
  for (size_t i = 0; i < marker.num_reserved; ++i) {
    out = internal::PutReservedArg(out, marker.reserved[i]);
  }
  for (size_t i = 0; i < marker.num_args; ++i) out = PutArg(out, marker.args[i]);
  for (size_t i = 0; i < marker.num_more_args; ++i) out = PutArg(out, marker.more_args[i]);
  return size;
}

std::string_view PlainName(const internal::EventRecord& record) {
  if (const internal::SourceLocation* site = SourceLocationOf(record)) {
    return std::string_view(site->name.data(), site->name.size());
  }
  if (const uint32_t args_offset = ArgsOffset(record)) {
    return std::string_view(record.name, args_offset - 1);
  }
  // Every byte: a string_view name is taken whole, NUL bytes included, as
  // with arguments (char arrays were cut at their first NUL when recorded).
  return std::string_view(record.name, record.name_length);
}

std::string_view FirstArgKey(const internal::EventRecord& record) {
  const uint32_t args_offset = ArgsOffset(record);
  if (args_offset == 0 || args_offset - 1 > record.name_length) return {};
  ArgReader in(
      std::string_view(record.name + args_offset - 1, record.name_length - (args_offset - 1)));
  char kind = 0;
  std::string_view key;
  if (!in.Take(&kind, 1) || !in.TakeText(&key)) return {};
  return key;
}

void DecodeArgs(const internal::EventRecord& record, std::vector<DecodedArg>* out) {
  out->clear();
  // A call site has no arguments.
  const uint32_t args_offset = ArgsOffset(record);
  if (args_offset == 0 || args_offset - 1 > record.name_length) return;
  ArgReader in(
      std::string_view(record.name + args_offset - 1, record.name_length - (args_offset - 1)));
  while (!in.done()) {
    DecodedArg arg;
    if (!in.Take(&arg.kind, 1) || !in.TakeText(&arg.key)) return;
    bool ok = false;
    switch (arg.kind) {
      case 'i':
        ok = in.Take(&arg.int_value, 8);
        break;
      case 'u':
        ok = in.Take(&arg.uint_value, 8);
        break;
      case 'd':
        ok = in.Take(&arg.double_value, 8);
        break;
      case 's':
        ok = in.TakeText(&arg.string_value);
        break;
      default:
        break;
    }
    if (!ok) return;
    out->push_back(arg);
  }
}

}  // namespace core
}  // namespace neuronprof
