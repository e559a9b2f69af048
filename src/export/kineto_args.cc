#include "src/export/kineto_args.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/xplane/absl_view.h"

namespace neuronprof {
namespace exporter {
namespace kineto {

std::string_view KinetoTypeName(std::string_view scalar_type) {
  struct Spelling {
    std::string_view torch, kineto;
  };
  static constexpr Spelling kSpellings[] = {
      {"Float", "float"},
      {"Double", "double"},
      {"Half", "c10::Half"},
      {"BFloat16", "c10::BFloat16"},
      {"Long", "long int"},
      {"Int", "int"},
      {"Short", "short int"},
      {"Char", "signed char"},
      {"Byte", "unsigned char"},
      {"Bool", "bool"},
      {"ComplexHalf", "c10::complex<c10::Half>"},
      {"ComplexFloat", "c10::complex<float>"},
      {"ComplexDouble", "c10::complex<double>"},
      {"Float8_e4m3fn", "c10::Float8_e4m3fn"},
      {"Float8_e5m2", "c10::Float8_e5m2"},
  };
  for (const Spelling& s : kSpellings) {
    if (s.torch == scalar_type) return s.kineto;
  }
  return scalar_type;
}

absl::InlinedVector<std::string_view, 8> KinetoInputTypes(std::string_view input_types) {
  absl::InlinedVector<std::string_view, 8> types;
  if (absl::StripAsciiWhitespace(xplane::AbslView(input_types)).empty()) return types;
  for (absl::string_view part : absl::StrSplit(xplane::AbslView(input_types), ',')) {
    part = absl::StripAsciiWhitespace(part);
    types.push_back(KinetoTypeName(std::string_view(part.data(), part.size())));
  }
  return types;
}

int64_t TorchDeviceType(std::string_view memory_device_type, std::string_view allocator) {
  std::string_view kind = memory_device_type;
  if (kind.empty()) kind = allocator.substr(0, allocator.find(':'));
  const absl::string_view text(kind.data(), kind.size());
  if (absl::EqualsIgnoreCase(text, "cpu")) return kTorchCpu;
  if (absl::EqualsIgnoreCase(text, "cuda") || absl::EqualsIgnoreCase(text, "gpu")) {
    return kTorchCuda;
  }
  return kTorchPrivateUse1;
}

}  // namespace kineto
}  // namespace exporter
}  // namespace neuronprof
