#include "src/export/json_text.h"

#include <cmath>
#include <cstdio>

namespace neuronprof {
namespace exporter {
namespace json {

void AppendEscaped(std::string* out, std::string_view text) {
  out->push_back('"');
  for (unsigned char c : text) {
    switch (c) {
      case '"': out->append("\\\""); break;
      case '\\': out->append("\\\\"); break;
      case '\n': out->append("\\n"); break;
      case '\t': out->append("\\t"); break;
      case '\r': out->append("\\r"); break;
      default:
        if (c < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
          out->append(escaped);
        } else {
          out->push_back(static_cast<char>(c));
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
  std::snprintf(number, sizeof(number), "%.10g", value);
  out->append(number);
}

void AppendMicros(std::string* out, int64_t ns) {
  if (ns < 0) {
    out->push_back('-');
    ns = -ns;
  }
  AppendInt(out, ns / 1000);
  const int rest = static_cast<int>(ns % 1000);
  const char fraction[4] = {'.', static_cast<char>('0' + rest / 100),
                            static_cast<char>('0' + rest / 10 % 10),
                            static_cast<char>('0' + rest % 10)};
  out->append(fraction, sizeof(fraction));
}

}  // namespace json
}  // namespace exporter
}  // namespace neuronprof
