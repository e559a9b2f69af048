// Valid UTF-8 for every string we write: protobuf `string` fields (which
// proto3 readers, Python's protobuf among them, refuse to parse otherwise)
// and JSON text. Ill-formed bytes become U+FFFD, one per maximal subpart
// (Unicode 15, section 3.9; what Python's and the WHATWG decoders do):
// surrogates (ED A0..BF), overlongs (C0, C1, E0 80..9F, F0 80..8F) and code
// points past U+10FFFF (F4 90.., F5..FF) are ill-formed.
#ifndef NEURONPROF_SRC_XPLANE_UTF8_H_
#define NEURONPROF_SRC_XPLANE_UTF8_H_

#include <string>
#include <string_view>

namespace neuronprof {
namespace utf8 {

inline constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

bool IsValid(std::string_view text);

// `text` itself when it is valid UTF-8 (no copy), else a copy in `*scratch`
// with every ill-formed subsequence replaced by U+FFFD.
std::string_view Valid(std::string_view text, std::string* scratch);

// The same, as an owned string.
std::string ToValid(std::string_view text);

}  // namespace utf8
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_UTF8_H_
