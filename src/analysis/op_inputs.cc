#include "src/analysis/op_inputs.h"

#include <cctype>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace neuronprof {
namespace analysis {
namespace {

constexpr double kMaxTensorElements = 1099511627776.0;  // 2^40

// Debian's Abseil has its own string_view type.
absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

struct DTypeInfo {
  DType dtype;
  const char* name;
  int64_t bytes;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat, "Float", 4}, {DType::kDouble, "Double", 8}, {DType::kHalf, "Half", 2},
    {DType::kBFloat16, "BFloat16", 2}, {DType::kLong, "Long", 8}, {DType::kInt, "Int", 4},
    {DType::kShort, "Short", 2}, {DType::kChar, "Char", 1}, {DType::kByte, "Byte", 1},
    {DType::kBool, "Bool", 1},
};

// A small cursor over the stat text; every parse error names the stat.
class Reader {
 public:
  Reader(std::string_view text, std::string_view stat) : text_(Absl(text)), stat_(Absl(stat)) {}

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("operator stat ", stat_, " = '", text_,
                                                   "': ", what, " at offset ", pos_));
  }
  absl::Status Expect(char c) {
    if (!Consume(c)) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    return absl::OkStatus();
  }
  absl::StatusOr<int64_t> Int() {
    SkipSpace();
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int64_t value = 0;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &value)) {
      pos_ = start;
      return Error("expected an integer");
    }
    return value;
  }
  // A JSON string: handles the escapes JSON writers emit; \uXXXX outside
  // ASCII becomes '?' (values of torch ops are ASCII).
  absl::StatusOr<std::string> String() {
    if (!Consume('"')) return Error("expected a string");
    std::string out;
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'u': {
          uint32_t code = 0;
          if (pos_ + 4 > text_.size() ||
              !absl::SimpleHexAtoi(text_.substr(pos_, 4), &code)) {
            return Error("bad \\u escape");
          }
          pos_ += 4;
          out.push_back(code < 0x80 ? static_cast<char>(code) : '?');
          break;
        }
        default: out.push_back(e);  // \" \\ \/
      }
    }
    return Error("unterminated string");
  }

 private:
  absl::string_view text_;
  absl::string_view stat_;
  size_t pos_ = 0;
};

absl::StatusOr<std::vector<std::vector<int64_t>>> ParseDims(std::string_view text) {
  Reader r(text, "input_dims");
  std::vector<std::vector<int64_t>> all;
  if (auto s = r.Expect('['); !s.ok()) return s;
  if (!r.Consume(']')) {
    do {
      if (auto s = r.Expect('['); !s.ok()) return s;
      std::vector<int64_t> dims;
      if (!r.Consume(']')) {
        do {
          auto d = r.Int();
          if (!d.ok()) return d.status();
          if (*d < 0) return r.Error("negative dimension");
          dims.push_back(*d);
          // No real tensor comes near 2^40 elements; the bound keeps every
          // formula's products far from int64 overflow.
          double elements = 1;
          for (int64_t x : dims) elements *= static_cast<double>(x);
          if (elements > kMaxTensorElements) return r.Error("tensor larger than 2^40 elements");
        } while (r.Consume(','));
        if (auto s = r.Expect(']'); !s.ok()) return s;
      }
      all.push_back(std::move(dims));
    } while (r.Consume(','));
    if (auto s = r.Expect(']'); !s.ok()) return s;
  }
  if (!r.AtEnd()) return r.Error("trailing text");
  return all;
}

absl::StatusOr<std::vector<std::string>> ParseValues(std::string_view text) {
  Reader r(text, "input_values");
  std::vector<std::string> all;
  if (auto s = r.Expect('['); !s.ok()) return s;
  if (!r.Consume(']')) {
    do {
      auto v = r.String();
      if (!v.ok()) return v.status();
      all.push_back(std::move(*v));
    } while (r.Consume(','));
    if (auto s = r.Expect(']'); !s.ok()) return s;
  }
  if (!r.AtEnd()) return r.Error("trailing text");
  return all;
}

}  // namespace

DType ParseDType(std::string_view name) {
  for (const DTypeInfo& info : kDTypes) {
    if (name == info.name) return info.dtype;
  }
  return DType::kNone;
}

const char* DTypeName(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info.name;
  }
  return "";
}

int64_t DTypeBytes(DType dtype) {
  for (const DTypeInfo& info : kDTypes) {
    if (info.dtype == dtype) return info.bytes;
  }
  return 0;
}

int64_t OpInput::Elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

absl::StatusOr<std::vector<OpInput>> ParseOpInputs(std::string_view dims, std::string_view types,
                                                   std::string_view values) {
  auto all_dims = ParseDims(dims);
  if (!all_dims.ok()) return all_dims.status();
  std::vector<std::string> all_types;
  if (!all_dims->empty() || !types.empty()) all_types = absl::StrSplit(Absl(types), ',');
  if (all_types.size() != all_dims->size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("operator stat input_types = '", Absl(types), "' names ", all_types.size(),
                     " inputs but input_dims = '", Absl(dims), "' has ", all_dims->size()));
  }
  std::vector<std::string> all_values;
  if (!values.empty()) {
    auto parsed = ParseValues(values);
    if (!parsed.ok()) return parsed.status();
    all_values = std::move(*parsed);
    if (all_values.size() != all_dims->size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("operator stat input_values = '", Absl(values), "' has ", all_values.size(),
                       " entries but input_dims = '", Absl(dims), "' has ", all_dims->size()));
    }
  }
  std::vector<OpInput> inputs(all_dims->size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    OpInput& in = inputs[i];
    in.type = std::string(absl::StripAsciiWhitespace(all_types[i]));
    in.dtype = ParseDType(in.type);
    in.is_tensor = in.dtype != DType::kNone;
    in.dims = std::move((*all_dims)[i]);
    if (!all_values.empty()) in.value = std::move(all_values[i]);
  }
  return inputs;
}

bool ParseIntList(std::string_view value, std::vector<int64_t>* out) {
  out->clear();
  absl::string_view text = absl::StripAsciiWhitespace(Absl(value));
  if (text.empty()) return false;
  const bool list = text.front() == '[';
  if (list) {
    if (text.back() != ']') return false;
    text = absl::StripAsciiWhitespace(text.substr(1, text.size() - 2));
    if (text.empty()) return true;
  }
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v)) return false;
    out->push_back(v);
  }
  return list || out->size() == 1;
}

}  // namespace analysis
}  // namespace neuronprof
