// Formats a libtorch op's inputs into the input_dims / input_types /
// input_values stats (see src/xplane/schema.h) without allocating: the text
// goes into caller-owned fixed buffers.
#ifndef NEURONPROF_SRC_COLLECTORS_TORCH_INPUT_FORMAT_H_
#define NEURONPROF_SRC_COLLECTORS_TORCH_INPUT_FORMAT_H_

#include <ATen/core/ivalue.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace neuronprof {
namespace collectors {
namespace libtorch {

// Appends text to a fixed buffer; remembers if anything did not fit.
class FixedWriter {
 public:
  FixedWriter(char* buffer, size_t capacity)
      : begin_(buffer), cursor_(buffer), end_(buffer + capacity) {}

  void Append(std::string_view text);
  void Append(char c);
  void AppendInt(int64_t value);
  void AppendDouble(double value);
  // Appends `text` as the inside of a JSON string (quotes and backslashes
  // escaped, control characters dropped).
  void AppendJsonEscaped(std::string_view text);

  bool overflowed() const { return overflowed_; }
  std::string_view view() const {
    return std::string_view(begin_, static_cast<size_t>(cursor_ - begin_));
  }

 private:
  char* begin_;
  char* cursor_;
  char* end_;
  bool overflowed_ = false;
};

struct FormattedInputs {
  std::string_view dims;    // "[[64,784],[],[128]]"
  std::string_view types;   // "Float,Scalar,Float"
  std::string_view values;  // ["","","1"]
};

constexpr size_t kDimsBytes = 1024;
constexpr size_t kTypesBytes = 512;
constexpr size_t kValuesBytes = 1024;

struct InputScratch {
  char dims[kDimsBytes];
  char types[kTypesBytes];
  char values[kValuesBytes];
};

// Returns false when the inputs do not fit the scratch buffers (the op is
// then recorded without them).
bool FormatInputs(c10::ArrayRef<const c10::IValue> inputs, InputScratch* scratch,
                  FormattedInputs* out);

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_TORCH_INPUT_FORMAT_H_
