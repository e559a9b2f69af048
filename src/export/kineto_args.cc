#include "src/export/kineto_args.h"


#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace neuronprof {
namespace exporter {
namespace kineto {
namespace {

absl::string_view Absl(std::string_view text) { return {text.data(), text.size()}; }

std::optional<std::array<int64_t, 3>> ParseDim3(absl::string_view text) {
  std::array<int64_t, 3> dims = {1, 1, 1};
  size_t i = 0;
  for (absl::string_view part : absl::StrSplit(text, absl::ByAnyChar(",x"))) {
    part = absl::StripAsciiWhitespace(absl::StripPrefix(absl::StripSuffix(part, ")"), "("));
    if (i >= 3 || !absl::SimpleAtoi(part, &dims[i])) return std::nullopt;
    ++i;
  }
  return dims;
}

}  // namespace

std::string KinetoTypeName(std::string_view scalar_type) {
  struct Spelling {
    std::string_view torch, kineto;
  };
  static constexpr Spelling kSpellings[] = {
      {"Float", "float"},           {"Double", "double"},
      {"Half", "c10::Half"},        {"BFloat16", "c10::BFloat16"},
      {"Long", "long int"},         {"Int", "int"},
      {"Short", "short int"},       {"Char", "signed char"},
      {"Byte", "unsigned char"},    {"Bool", "bool"},
      {"ComplexHalf", "c10::complex<c10::Half>"},
      {"ComplexFloat", "c10::complex<float>"},
      {"ComplexDouble", "c10::complex<double>"},
      {"Float8_e4m3fn", "c10::Float8_e4m3fn"},
      {"Float8_e5m2", "c10::Float8_e5m2"},
  };
  for (const Spelling& s : kSpellings) {
    if (s.torch == scalar_type) return std::string(s.kineto);
  }
  return std::string(scalar_type);
}

std::vector<std::string> KinetoInputTypes(std::string_view input_types) {
  std::vector<std::string> types;
  if (absl::StripAsciiWhitespace(Absl(input_types)).empty()) return types;
  for (absl::string_view part : absl::StrSplit(Absl(input_types), ',')) {
    part = absl::StripAsciiWhitespace(part);
    types.push_back(KinetoTypeName(std::string_view(part.data(), part.size())));
  }
  return types;
}

KernelLaunch ParseKernelDetails(std::string_view details) {
  KernelLaunch launch;
  std::optional<int64_t> static_shared, dynamic_shared;
  for (absl::string_view token : absl::StrSplit(Absl(details), absl::ByAnyChar(" \t\n;"),
                                                absl::SkipEmpty())) {
    const size_t sep = token.find_first_of(":=");
    if (sep == absl::string_view::npos) continue;
    const std::string key = absl::AsciiStrToLower(token.substr(0, sep));
    const absl::string_view value = token.substr(sep + 1);
    int64_t number = 0;
    double real = 0;
    if (key == "grid" || key == "grid_dim" || key == "griddim") {
      launch.grid = ParseDim3(value);
    } else if (key == "block" || key == "block_dim" || key == "blockdim") {
      launch.block = ParseDim3(value);
    } else if ((key == "registers" || key == "regs" || key == "registers_per_thread" ||
                key == "regs_per_thread") &&
               absl::SimpleAtoi(value, &number)) {
      launch.registers_per_thread = number;
    } else if ((key == "shared_memory" || key == "smem" || key == "shared_mem") &&
               absl::SimpleAtoi(value, &number)) {
      launch.shared_memory = number;
    } else if (key == "static_shared" && absl::SimpleAtoi(value, &number)) {
      static_shared = number;
    } else if (key == "dynamic_shared" && absl::SimpleAtoi(value, &number)) {
      dynamic_shared = number;
    } else if (key == "blocks_per_sm" && absl::SimpleAtod(value, &real)) {
      launch.blocks_per_sm = real;
    } else if ((key == "occupancy" || key == "occ_pct" || key == "occupancy_pct" ||
                key == "achieved_occupancy" || key == "est_achieved_occupancy") &&
               absl::SimpleAtod(absl::StripSuffix(value, "%"), &real)) {
      // A bare fraction (0.5) means 50 %; "occ_pct:0.5" stays 0.5 %.
      const bool fraction = key.find("pct") == std::string::npos &&
                            !absl::EndsWith(value, "%") && real <= 1.0;
      launch.occupancy_pct = fraction ? real * 100.0 : real;
    }
  }
  if (!launch.shared_memory && (static_shared || dynamic_shared)) {
    // A sum past int64 (a crafted stat) is unreadable, not wrapped.
    int64_t sum = 0;
    if (!__builtin_add_overflow(static_shared.value_or(0), dynamic_shared.value_or(0), &sum)) {
      launch.shared_memory = sum;
    }
  }
  return launch;
}

std::optional<std::array<int64_t, 2>> ParseComputeCapability(std::string_view input) {
  absl::string_view text = absl::StripAsciiWhitespace(Absl(input));
  text = absl::StripPrefix(absl::StripPrefix(text, "sm_"), "compute_");
  const size_t dot = text.find('.');
  int64_t major = 0, minor = 0;
  if (dot != absl::string_view::npos) {
    if (!absl::SimpleAtoi(text.substr(0, dot), &major) ||
        !absl::SimpleAtoi(text.substr(dot + 1), &minor)) {
      return std::nullopt;
    }
    return std::array<int64_t, 2>{major, minor};
  }
  int64_t joined = 0;
  if (!absl::SimpleAtoi(text, &joined) || joined < 10) return std::nullopt;
  return std::array<int64_t, 2>{joined / 10, joined % 10};
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
