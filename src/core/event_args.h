// Encoding of marker arguments inside a copied name: the one writer
// (EncodeMarker) and the one reader (PlainName, DecodeArgs) of the format.
// A record with arguments stores its plain name, then for each argument
//   kind byte ('i' int64, 'u' uint64, 'd' double, 's' string)
//   key:   uint32 length, then the key's bytes
//   value: 8 bytes for i/u/d (the value's bits), or for s a uint32 length,
//          then the string's bytes
// Integers are in the machine's byte order: records never leave the process
// that wrote them. Binary, so numbers are not printed and parsed back, and
// keys and values keep every byte (the XSpace builders repair UTF-8 later).
#ifndef NEURONPROF_SRC_CORE_EVENT_ARGS_H_
#define NEURONPROF_SRC_CORE_EVENT_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "neuronprof/internal/recorder.h"
#include "neuronprof/trace.h"

// NEURONPROF_API here: exported from libneuronprof_markers for the other
// neuronprof libraries (not public API; see neuronprof/export.h).

namespace neuronprof {
namespace core {

struct DecodedArg {
  std::string_view key;
  char kind = 's';  // 'i', 'u', 'd' or 's'
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0.0;
  std::string_view string_value;
};

// A marker's name and arguments, to be encoded into the arena: the
// reserved arguments of a flow, async span, counter or instant first.
struct MarkerText {
  std::string_view name;
  const TraceArg* args;
  size_t num_args;
  const TraceArg* more_args;
  size_t num_more_args;
  const internal::ReservedArg* reserved = nullptr;
  size_t num_reserved = 0;
};

// Encodes `marker` into `capacity` bytes at `begin` (which may be null when
// `capacity` is 0). Returns the size of the whole encoding: it was written
// only if that is <= capacity.
size_t EncodeMarker(char* begin, size_t capacity, const MarkerText& marker);

// Where a record's arguments begin (EventRecord::args_offset without its
// flags): 0 for none.
inline uint32_t ArgsOffset(const internal::EventRecord& record) {
  return record.args_offset == internal::kSourceLocationTag
             ? 0
             : record.args_offset & ~internal::kNameCopiedAtEnd;
}

// The call site of a NEURONPROF_SCOPE record (name, file, line); nullptr
// for every other record.
inline const internal::SourceLocation* SourceLocationOf(const internal::EventRecord& record) {
  return record.args_offset == internal::kSourceLocationTag
             ? reinterpret_cast<const internal::SourceLocation*>(record.name)
             : nullptr;
}

// The plain name of a record (without arguments).
NEURONPROF_API std::string_view PlainName(const internal::EventRecord& record);
// The key of a record's first argument ("" when it has none): where the
// reserved keys of flows, async spans, counters and instants sit.
NEURONPROF_API std::string_view FirstArgKey(const internal::EventRecord& record);
// Decodes the arguments of a record into `out` (cleared first). Stops at an
// argument that is cut short (none is, unless the record was corrupted).
NEURONPROF_API void DecodeArgs(const internal::EventRecord& record, std::vector<DecodedArg>* out);

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_EVENT_ARGS_H_
