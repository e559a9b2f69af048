#include "src/xplane/utf8.h"

#include <cstddef>

namespace neuronprof {
namespace utf8 {
namespace {

// Length of the well-formed sequence at text[pos], or, when it is
// ill-formed, the negated length of its maximal subpart (at least 1): the
// longest prefix that could still begin a well-formed sequence.
int Sequence(std::string_view text, size_t pos) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(pos);
  if (lead < 0x80) return 1;
  int length;
  unsigned char low = 0x80, high = 0xBF;  // Range of the second byte.
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // Overlong.
    if (lead == 0xED) high = 0x9F;  // Surrogates.
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // Overlong.
    if (lead == 0xF4) high = 0x8F;  // Past U+10FFFF.
  } else {
    return -1;  // 80..C1, F5..FF never start a sequence.
  }
  for (int i = 1; i < length; ++i) {
    if (pos + i >= text.size()) return -i;
    const unsigned char c = byte(pos + i);
    const bool fits = i == 1 ? (c >= low && c <= high) : (c >= 0x80 && c <= 0xBF);
    if (!fits) return -i;
  }
  return length;
}

}  // namespace

bool IsValid(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    if (static_cast<unsigned char>(text[pos]) < 0x80) {
      ++pos;
      continue;
    }
    const int length = Sequence(text, pos);
    if (length < 0) return false;
    pos += static_cast<size_t>(length);
  }
  return true;
}

std::string_view Valid(std::string_view text, std::string* scratch) {
  if (IsValid(text)) return text;
  scratch->clear();
  scratch->reserve(text.size() + 8);
  for (size_t pos = 0; pos < text.size();) {
    const int length = Sequence(text, pos);
    if (length > 0) {
      scratch->append(text.data() + pos, static_cast<size_t>(length));
      pos += static_cast<size_t>(length);
    } else {
      scratch->append(kReplacement);
      pos += static_cast<size_t>(-length);
    }
  }
  return *scratch;
}

std::string ToValid(std::string_view text) {
  std::string scratch;
  return std::string(Valid(text, &scratch));
}

}  // namespace utf8
}  // namespace neuronprof
