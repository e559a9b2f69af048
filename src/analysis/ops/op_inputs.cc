#include "src/analysis/ops/op_inputs.h"

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/xplane/absl_view.h"
#include "src/xplane/json_reader.h"

namespace neuronprof {
namespace analysis {
namespace {

constexpr double kMaxTensorElements = 1099511627776.0;  // 2^40

struct DTypeInfo {
  DType dtype;
  const char* name;
  int64_t bytes;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat, "Float", 4},       {DType::kDouble, "Double", 8}, {DType::kHalf, "Half", 2},
    {DType::kBFloat16, "BFloat16", 2}, {DType::kLong, "Long", 8},     {DType::kInt, "Int", 4},
    {DType::kShort, "Short", 2},       {DType::kChar, "Char", 1},     {DType::kByte, "Byte", 1},
    {DType::kBool, "Bool", 1},
};

// The one JSON reader over a stat's text; every parse error names the stat
// and the offset where the text went wrong.
class StatReader {
 public:
  StatReader(std::string_view text, std::string_view stat)
      : json_(text), text_(text), stat_(stat) {}

  json_reader::Reader& json() { return json_; }
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("operator stat ", xplane::AbslView(stat_), " = '", xplane::AbslView(text_),
                     "': ", xplane::AbslView(what), " at offset ", json_.offset()));
  }
  absl::Status Expect(char c) {
    if (!json_.Consume(c)) return Error(absl::StrCat("expected '", std::string(1, c), "'"));
    return absl::OkStatus();
  }

 private:
  json_reader::Reader json_;
  std::string_view text_;
  std::string_view stat_;
};

absl::StatusOr<std::vector<std::vector<int64_t>>> ParseDims(std::string_view text) {
  StatReader r(text, "input_dims");
  json_reader::Reader& json = r.json();
  std::vector<std::vector<int64_t>> all;
  if (auto s = r.Expect('['); !s.ok()) return s;
  if (!json.Consume(']')) {
    do {
      if (auto s = r.Expect('['); !s.ok()) return s;
      std::vector<int64_t> dims;
      if (!json.Consume(']')) {
        do {
          int64_t d = 0;
          if (!json.Int(&d)) return r.Error("expected an integer");
          if (d < 0) return r.Error("negative dimension");
          dims.push_back(d);
          // No real tensor comes near 2^40 elements; the bound keeps every
          // formula's products far from int64 overflow.
          double elements = 1;
          for (int64_t x : dims) elements *= static_cast<double>(x);
          if (elements > kMaxTensorElements) return r.Error("tensor larger than 2^40 elements");
        } while (json.Consume(','));
        if (auto s = r.Expect(']'); !s.ok()) return s;
      }
      all.push_back(std::move(dims));
    } while (json.Consume(','));
    if (auto s = r.Expect(']'); !s.ok()) return s;
  }
  if (!json.AtEnd()) return r.Error("trailing text");
  return all;
}

absl::StatusOr<std::vector<std::string>> ParseValues(std::string_view text) {
  StatReader r(text, "input_values");
  json_reader::Reader& json = r.json();
  std::vector<std::string> all;
  if (auto s = r.Expect('['); !s.ok()) return s;
  if (!json.Consume(']')) {
    do {
      std::string value;
      if (!json.String(&value)) return r.Error("expected a JSON string");
      all.push_back(std::move(value));
    } while (json.Consume(','));
    if (auto s = r.Expect(']'); !s.ok()) return s;
  }
  if (!json.AtEnd()) return r.Error("trailing text");
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
  if (!all_dims->empty() || !types.empty())
    all_types = absl::StrSplit(xplane::AbslView(types), ',');
  if (all_types.size() != all_dims->size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "operator stat input_types = '", xplane::AbslView(types), "' names ", all_types.size(),
        " inputs but input_dims = '", xplane::AbslView(dims), "' has ", all_dims->size()));
  }
  std::vector<std::string> all_values;
  if (!values.empty()) {
    auto parsed = ParseValues(values);
    if (!parsed.ok()) return parsed.status();
    all_values = std::move(*parsed);
    if (all_values.size() != all_dims->size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "operator stat input_values = '", xplane::AbslView(values), "' has ", all_values.size(),
          " entries but input_dims = '", xplane::AbslView(dims), "' has ", all_dims->size()));
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
  absl::string_view text = absl::StripAsciiWhitespace(xplane::AbslView(value));
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
