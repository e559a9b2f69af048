#include "src/xplane/json_reader.h"

#include "absl/strings/numbers.h"
#include "src/xplane/utf8.h"

namespace neuronprof {
namespace json_reader {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexDigit(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendUtf8(std::string* out, uint32_t code) {
  if (code < 0x80) {
    out->push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (code >> 6)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (code >> 12)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (code >> 18)));
    out->push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

}  // namespace

void Reader::SkipSpace() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
                                 text_[pos_] == '\r')) {
    ++pos_;
  }
}

bool Reader::Consume(char c) {
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

bool Reader::AtEnd() {
  SkipSpace();
  return pos_ == text_.size();
}

bool Reader::Literal(std::string_view word) {
  if (text_.substr(pos_, word.size()) != word) return false;
  pos_ += word.size();
  return true;
}

bool Reader::Digits() {
  const size_t start = pos_;
  while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
  return pos_ > start;
}

bool Reader::Number() {
  if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
  if (pos_ < text_.size() && text_[pos_] == '0') {
    ++pos_;  // A leading zero stands alone.
  } else if (!Digits()) {
    return false;
  }
  if (pos_ < text_.size() && text_[pos_] == '.') {
    ++pos_;
    if (!Digits()) return false;
  }
  if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
    if (!Digits()) return false;
  }
  return true;
}

bool Reader::Int(int64_t* out) {
  SkipSpace();
  const size_t start = pos_;
  const bool number = Number();
  const std::string_view token = text_.substr(start, pos_ - start);
  if (!number || token.find_first_of(".eE") != std::string_view::npos ||
      !absl::SimpleAtoi(absl::string_view(token.data(), token.size()), out)) {
    pos_ = start;
    return false;
  }
  return true;
}

int Reader::Hex4() {
  if (text_.size() - pos_ < 4) return -1;
  int value = 0;
  for (int i = 0; i < 4; ++i) {
    const int digit = HexDigit(text_[pos_++]);
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

// After the backslash.
bool Reader::Escape(std::string* out) {
  if (pos_ >= text_.size()) return false;
  const char e = text_[pos_++];
  if (e != 'u') {
    static constexpr std::string_view kEscapes = "\"\\/bfnrt";
    static constexpr std::string_view kMeanings = "\"\\/\b\f\n\r\t";
    const size_t which = kEscapes.find(e);
    if (which == std::string_view::npos) return false;
    if (out != nullptr) out->push_back(kMeanings[which]);
    return true;
  }
  const int unit = Hex4();
  if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
  uint32_t code = static_cast<uint32_t>(unit);
  if (unit >= 0xD800 && unit <= 0xDBFF) {
    // A high surrogate must be followed by a low one.
    if (!Literal("\\u")) return false;
    const int low = Hex4();
    if (low < 0xDC00 || low > 0xDFFF) return false;
    code = 0x10000 + ((code - 0xD800) << 10) + static_cast<uint32_t>(low - 0xDC00);
  }
  if (out != nullptr) AppendUtf8(out, code);
  return true;
}

bool Reader::String(std::string* out) {
  SkipSpace();
  const size_t open = pos_;
  if (pos_ >= text_.size() || text_[pos_] != '"') return false;
  if (out != nullptr) out->clear();
  const size_t start = ++pos_;
  while (pos_ < text_.size()) {
    const char c = text_[pos_++];
    if (c == '"') {
      if (utf8::IsValid(text_.substr(start, pos_ - 1 - start))) return true;
      break;
    }
    if (static_cast<unsigned char>(c) < 0x20) break;
    if (c != '\\') {
      if (out != nullptr) out->push_back(c);
    } else if (!Escape(out)) {
      break;
    }
  }
  pos_ = open;
  return false;
}

bool Reader::Sequence(char close, int depth, bool object) {
  ++pos_;  // The opening bracket.
  if (Consume(close)) return true;
  do {
    if (object && (!String(nullptr) || !Consume(':'))) return false;
    if (!Value(depth + 1)) return false;
  } while (Consume(','));
  return Consume(close);
}

bool Reader::Value(int depth) {
  if (depth > kMaxDepth) return false;
  SkipSpace();
  if (pos_ >= text_.size()) return false;
  switch (text_[pos_]) {
    case '[':
      return Sequence(']', depth, false);
    case '{':
      return Sequence('}', depth, true);
    case '"':
      return String(nullptr);
    case 't':
      return Literal("true");
    case 'f':
      return Literal("false");
    case 'n':
      return Literal("null");
    default:
      return Number();
  }
}

bool Reader::SkipValue() { return Value(0); }

bool IsStrictJson(std::string_view text) {
  Reader reader(text);
  return reader.SkipValue() && reader.AtEnd();
}

bool IsStrictJsonArray(std::string_view text) {
  Reader reader(text);
  return reader.Consume('[') && IsStrictJson(text);
}

}  // namespace json_reader
}  // namespace neuronprof
