#include "src/analysis/text/terminal_text.h"

#include "fmt/format.h"
#include "src/xplane/utf8.h"

namespace neuronprof {
namespace analysis {
namespace {

bool IsC0OrDel(unsigned char c) { return c < 0x20 || c == 0x7f; }

// U+0080..U+009F in UTF-8: C2 80..C2 9F.
bool IsC1(std::string_view text, size_t i) {
  return static_cast<unsigned char>(text[i]) == 0xc2 && i + 1 < text.size() &&
         static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
         static_cast<unsigned char>(text[i + 1]) <= 0x9f;
}

}  // namespace

std::string TerminalText(std::string_view text, LineBreaks breaks) {
  std::string scratch;
  const std::string_view valid = utf8::Valid(text, &scratch);
  std::string out;
  out.reserve(valid.size());
  for (size_t i = 0; i < valid.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(valid[i]);
    if (c == '\n' && breaks == LineBreaks::kKeep) {
      out.push_back('\n');
    } else if (IsC0OrDel(c)) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
    } else if (IsC1(valid, i)) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}",
                     static_cast<unsigned char>(valid[i + 1]));
      ++i;
    } else {
      out.push_back(valid[i]);
    }
  }
  return out;
}

}  // namespace analysis
}  // namespace neuronprof
