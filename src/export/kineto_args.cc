#include "src/export/kineto_args.h"

#include <cctype>
#include <cstdlib>

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

// A small recursive-descent checker of JSON text. Depth is bounded so a
// hostile stat cannot exhaust the stack.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : text_(text) {}

  bool WholeArray() {
    SkipSpace();
    if (pos_ >= text_.size() || text_[pos_] != '[') return false;
    if (!Value(0)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  static constexpr int kMaxDepth = 64;

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
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
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    return pos_ > start;
  }
  bool Number() {
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    if (!Digits()) return false;
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
  bool String() {
    ++pos_;  // The opening quote.
    while (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_++]);
      if (c == '"') return true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (pos_ >= text_.size()) return false;
        const char e = text_[pos_++];
        if (e == 'u') {
          for (int i = 0; i < 4; ++i, ++pos_) {
            if (pos_ >= text_.size() ||
                !std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
              return false;
            }
          }
        } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
          return false;
        }
      }
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

bool IsJsonArray(std::string_view text) { return JsonChecker(text).WholeArray(); }

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
    launch.shared_memory = static_shared.value_or(0) + dynamic_shared.value_or(0);
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

}  // namespace kineto
}  // namespace exporter
}  // namespace neuronprof
