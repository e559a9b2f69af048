#include "src/export/json_text.h"

#include <cmath>
#include <cstdio>

#include "src/xplane/utf8.h"

namespace neuronprof {
namespace exporter {
namespace json {

void AppendEscaped(std::string* out, std::string_view text) {
  std::string scratch;
  const std::string_view valid = utf8::Valid(text, &scratch);
  out->push_back('"');
  for (const char c : valid) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\t': out->append("\\t"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out->append(escaped);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void AppendDouble(std::string* out, double value) {
  if (!std::isfinite(value)) {
    out->append("null");
    return;
  }
  char number[32];
  const auto end = std::to_chars(number, number + sizeof(number), value).ptr;
  out->append(number, static_cast<size_t>(end - number));
}

void AppendMicros(std::string* out, int64_t ns) {
  // The magnitude as unsigned: -INT64_MIN does not fit an int64.
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    out->push_back('-');
    magnitude = 0 - magnitude;
  }
  AppendInt(out, magnitude / 1000);
  const int rest = static_cast<int>(magnitude % 1000);
  const char fraction[4] = {'.', static_cast<char>('0' + rest / 100),
                            static_cast<char>('0' + rest / 10 % 10),
                            static_cast<char>('0' + rest % 10)};
  out->append(fraction, sizeof(fraction));
}

}  // namespace json
}  // namespace exporter
}  // namespace neuronprof
