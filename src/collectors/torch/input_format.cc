#include "src/collectors/torch/input_format.h"

#include <c10/core/ScalarType.h>

#include <charconv>
#include <cstring>

namespace neuronprof {
namespace collectors {
namespace libtorch {

void FixedWriter::Append(std::string_view text) {
  if (static_cast<size_t>(end_ - cursor_) < text.size()) {
    overflowed_ = true;
    return;
  }
  std::memcpy(cursor_, text.data(), text.size());
  cursor_ += text.size();
}

void FixedWriter::Append(char c) {
  if (cursor_ == end_) {
    overflowed_ = true;
    return;
  }
  *cursor_++ = c;
}

void FixedWriter::AppendInt(int64_t value) {
  auto [ptr, ec] = std::to_chars(cursor_, end_, value);
  if (ec != std::errc()) {
    overflowed_ = true;
    return;
  }
  cursor_ = ptr;
}

void FixedWriter::AppendDouble(double value) {
  auto [ptr, ec] = std::to_chars(cursor_, end_, value);
  if (ec != std::errc()) {
    overflowed_ = true;
    return;
  }
  cursor_ = ptr;
}

void FixedWriter::AppendJsonEscaped(std::string_view text) {
  for (char c : text) {
    if (c == '"' || c == '\\') {
      Append('\\');
      Append(c);
    } else if (static_cast<unsigned char>(c) >= 0x20) {
      Append(c);
    }
  }
}

namespace {

// The value of a non-tensor input, as the text inside input_values' quotes.
void AppendValue(const c10::IValue& value, FixedWriter* out) {
  if (value.isNone()) {
    out->Append("None");
  } else if (value.isBool()) {
    out->Append(value.toBool() ? "true" : "false");
  } else if (value.isInt()) {
    out->AppendInt(value.toInt());
  } else if (value.isDouble()) {
    out->AppendDouble(value.toDouble());
  } else if (value.isString()) {
    out->AppendJsonEscaped(value.toStringRef());
  } else if (value.isIntList() || value.isDoubleList() || value.isBoolList()) {
    out->Append('[');
    bool first = true;
    for (const c10::IValue& element : value.toListRef()) {
      if (!first) out->Append(", ");
      first = false;
      AppendValue(element, out);
    }
    out->Append(']');
  }
  // Other kinds (tensor lists, objects, ...) have no short value: "".
}

const char* TypeName(const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    return tensor.defined() ? c10::toString(tensor.scalar_type()) : "";
  }
  if (value.isBool() || value.isInt() || value.isDouble() || value.isComplexDouble()) {
    return "Scalar";
  }
  if (value.isTensorList()) return "TensorList";
  return "";
}

}  // namespace

bool FormatInputs(c10::ArrayRef<const c10::IValue> inputs, InputScratch* scratch,
                  FormattedInputs* out) {
  FixedWriter dims(scratch->dims, kDimsBytes);
  FixedWriter types(scratch->types, kTypesBytes);
  FixedWriter values(scratch->values, kValuesBytes);
  dims.Append('[');
  values.Append('[');
  bool first = true;
  for (const c10::IValue& input : inputs) {
    if (!first) {
      dims.Append(',');
      types.Append(',');
      values.Append(',');
    }
    first = false;
    dims.Append('[');
    if (input.isTensor() && input.toTensor().defined()) {
      bool first_dim = true;
      for (int64_t size : input.toTensor().sizes()) {
        if (!first_dim) dims.Append(',');
        first_dim = false;
        dims.AppendInt(size);
      }
    }
    dims.Append(']');
    types.Append(TypeName(input));
    values.Append('"');
    if (!input.isTensor()) AppendValue(input, &values);
    values.Append('"');
  }
  dims.Append(']');
  values.Append(']');
  if (dims.overflowed() || types.overflowed() || values.overflowed()) {
    return false;
  }
  out->dims = dims.view();
  out->types = types.view();
  out->values = values.view();
  return true;
}

}  // namespace libtorch
}  // namespace collectors
}  // namespace neuronprof
