// Appending strict JSON text (RFC 8259, what Python's json and Perfetto
// accept): escaped strings of valid UTF-8, integers, doubles, and
// microsecond times printed exactly from integer nanoseconds. Every JSON
// file we write goes through these. Reading JSON (and checking that text
// is strict JSON) is src/xplane/json_reader.h.
#ifndef NEURONPROF_SRC_EXPORT_JSON_TEXT_H_
#define NEURONPROF_SRC_EXPORT_JSON_TEXT_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace neuronprof {
namespace exporter {
namespace json {

// `text` as a quoted JSON string: control characters as \uXXXX (or \n, \t,
// \r), '"' and '\' escaped, invalid UTF-8 replaced by U+FFFD (utf8::Valid).
void AppendEscaped(std::string* out, std::string_view text);
// Shortest text that reads back as the same double; NaN and infinities (not JSON) as null.
void AppendDouble(std::string* out, double value);
// ns / 1000 with 3 decimals: 1234 -> "1.234", -5 -> "-0.005"; exact for
// every int64, INT64_MIN included.
void AppendMicros(std::string* out, int64_t ns);

template <typename Int>
void AppendInt(std::string* out, Int value) {
  char digits[24];
  const auto end = std::to_chars(digits, digits + sizeof(digits), value).ptr;
  out->append(digits, static_cast<size_t>(end - digits));
}

}  // namespace json
}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_JSON_TEXT_H_
