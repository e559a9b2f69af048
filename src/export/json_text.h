// Appending JSON text: escaped strings, integers, doubles, and microsecond
// times printed exactly from integer nanoseconds.
#ifndef NEURONPROF_SRC_EXPORT_JSON_TEXT_H_
#define NEURONPROF_SRC_EXPORT_JSON_TEXT_H_

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace neuronprof {
namespace exporter {
namespace json {

// `text` as a quoted JSON string (control characters as \uXXXX).
void AppendEscaped(std::string* out, std::string_view text);
// %.10g; NaN and infinities (not JSON) as null.
void AppendDouble(std::string* out, double value);
// ns / 1000 with 3 decimals: 1234 -> "1.234", -5 -> "-0.005".
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
