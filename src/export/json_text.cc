#include "src/export/json_text.h"

#include <cmath>
#include <cstdio>

#include "src/xplane/utf8.h"

namespace neuronprof {
namespace exporter {
namespace json {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int HexDigit(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A recursive-descent checker of strict JSON text.
class StrictChecker {
 public:
  explicit StrictChecker(std::string_view text) : text_(text) {}

  // One value and nothing else; `array` asks for an array.
  bool Whole(bool array) {
    SkipSpace();
    if (array && (pos_ >= text_.size() || text_[pos_] != '[')) return false;
    if (!Value(0)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool Digits() {
    const size_t start = pos_;
    while (pos_ < text_.size() && IsDigit(text_[pos_])) ++pos_;
    return pos_ > start;
  }
  bool Number() {
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
  // \uXXXX after the "\u"; -1 when malformed.
  int Hex4() {
    if (text_.size() - pos_ < 4) return -1;
    int value = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = HexDigit(text_[pos_++]);
      if (digit < 0) return -1;
      value = value * 16 + digit;
    }
    return value;
  }
  bool Escape() {
    if (pos_ >= text_.size()) return false;
    const char e = text_[pos_++];
    if (e != 'u') return std::string_view("\"\\/bfnrt").find(e) != std::string_view::npos;
    const int unit = Hex4();
    if (unit < 0 || (unit >= 0xDC00 && unit <= 0xDFFF)) return false;
    if (unit < 0xD800 || unit > 0xDBFF) return true;
    // A high surrogate must be followed by a low one.
    if (!Literal("\\u")) return false;
    const int low = Hex4();
    return low >= 0xDC00 && low <= 0xDFFF;
  }
  bool String() {
    const size_t start = ++pos_;  // After the opening quote.
    while (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_++]);
      if (c == '"') return utf8::IsValid(text_.substr(start, pos_ - 1 - start));
      if (c < 0x20) return false;
      if (c == '\\' && !Escape()) return false;
    }
    return false;
  }
  bool Sequence(char close, int depth, bool object) {
    ++pos_;  // The opening bracket.
    if (Eat(close)) return true;
    do {
      if (object) {
        SkipSpace();
        if (pos_ >= text_.size() || text_[pos_] != '"' || !String() || !Eat(':')) {
          return false;
        }
      }
      if (!Value(depth + 1)) return false;
    } while (Eat(','));
    return Eat(close);
  }
  bool Value(int depth) {
    if (depth > kMaxDepth) return false;
    SkipSpace();
    if (pos_ >= text_.size()) return false;
    switch (text_[pos_]) {
      case '[': return Sequence(']', depth, false);
      case '{': return Sequence('}', depth, true);
      case '"': return String();
      case 't': return Literal("true");
      case 'f': return Literal("false");
      case 'n': return Literal("null");
      default: return Number();
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

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

bool IsStrictJson(std::string_view text) { return StrictChecker(text).Whole(false); }

bool IsStrictJsonArray(std::string_view text) { return StrictChecker(text).Whole(true); }

}  // namespace json
}  // namespace exporter
}  // namespace neuronprof
