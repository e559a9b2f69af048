// Encoding of marker arguments inside a copied name. A record with
// arguments stores: plain name, then for each argument
//   kArgSeparator key kKindSeparator <kind char> value
// Kind chars: 'i' int64, 'u' uint64, 'd' double, 's' string. Control
// characters in keys and values are replaced, so the separators stay
// unambiguous.
#ifndef NEURONPROF_SRC_CORE_EVENT_ARGS_H_
#define NEURONPROF_SRC_CORE_EVENT_ARGS_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "neuronprof/internal/recorder.h"

// NEURONPROF_API here: exported from libneuronprof_markers for the other
// neuronprof libraries (not public API; see neuronprof/export.h).

namespace neuronprof {
namespace core {

constexpr char kArgSeparator = '\x1e';
constexpr char kKindSeparator = '\x1f';

struct DecodedArg {
  std::string_view key;
  char kind = 's';  // 'i', 'u', 'd' or 's'
  int64_t int_value = 0;
  uint64_t uint_value = 0;
  double double_value = 0.0;
  std::string_view string_value;
};

// The plain name of a record (without arguments).
NEURONPROF_API std::string_view PlainName(const internal::EventRecord& record);
// Decodes the arguments of a record into `out` (cleared first).
NEURONPROF_API void DecodeArgs(const internal::EventRecord& record, std::vector<DecodedArg>* out);

}  // namespace core
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_CORE_EVENT_ARGS_H_
