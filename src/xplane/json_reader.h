// The one JSON reader: a cursor over strict JSON text (RFC 8259, what
// Python's json accepts) for the few JSON inputs we read, the operator
// stats input_dims / input_values (schema.h) above all, and the strict
// checker built on it. It lives beside utf8 so that analysis and export,
// which both read those stats, share one grammar.
#ifndef NEURONPROF_SRC_XPLANE_JSON_READER_H_
#define NEURONPROF_SRC_XPLANE_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace neuronprof {
namespace json_reader {

// Every method skips JSON whitespace (space, tab, CR, LF) first. A method
// that returns false leaves the cursor where the malformed token begins, so
// offset() says where the text went wrong.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  // Consumes `c` when it is the next character.
  bool Consume(char c);
  // Only whitespace is left.
  bool AtEnd();
  size_t offset() const { return pos_; }

  // A JSON number that is an integer within int64 ("-12"; not "1.0", "1e3",
  // "01" or past int64).
  bool Int(int64_t* out);
  // A JSON string: no raw control characters, valid UTF-8, only JSON's
  // escapes, surrogate escapes in pairs. Decoded into `*out` (UTF-8) unless
  // out is nullptr.
  bool String(std::string* out);
  // Any one JSON value, nested at most 64 deep (hostile input cannot
  // exhaust the stack).
  bool SkipValue();

 private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace();
  bool Literal(std::string_view word);
  bool Digits();
  bool Number();
  int Hex4();
  bool Escape(std::string* out);
  bool Sequence(char close, int depth, bool object);
  bool Value(int depth);

  std::string_view text_;
  size_t pos_ = 0;
};

// True if `text` is exactly one strict JSON value (whitespace around it
// allowed): no NaN/Infinity, no leading zeros, no trailing commas, strings
// as Reader::String takes them, at most 64 deep.
bool IsStrictJson(std::string_view text);
// The same, and the value is an array.
bool IsStrictJsonArray(std::string_view text);

}  // namespace json_reader
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_JSON_READER_H_
