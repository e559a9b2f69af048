#include "src/xplane/device_details.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/xplane/absl_view.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace xplane {
namespace {

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

KernelLaunch ParseKernelDetails(std::string_view details) {
  KernelLaunch launch;
  std::optional<int64_t> static_shared, dynamic_shared;
  for (absl::string_view token :
       absl::StrSplit(AbslView(details), absl::ByAnyChar(" \t\n;"), absl::SkipEmpty())) {
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
      const bool fraction =
          key.find("pct") == std::string::npos && !absl::EndsWith(value, "%") && real <= 1.0;
      launch.occupancy_pct = fraction ? real * 100.0 : real;
    }
  }
  if (!launch.shared_memory && (static_shared || dynamic_shared)) {
    // A sum past int64 (a crafted stat) is unreadable, not wrapped.
    const Checked sum = Checked(static_shared.value_or(0)) + dynamic_shared.value_or(0);
    if (sum.ok()) launch.shared_memory = sum.value();
  }
  return launch;
}

std::optional<std::array<int64_t, 2>> ParseComputeCapability(std::string_view input) {
  absl::string_view text = absl::StripAsciiWhitespace(AbslView(input));
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

std::optional<std::array<int64_t, 2>> ComputeCapability(const PlaneVisitor& plane) {
  if (const auto stat = plane.PlaneStat("compute_capability")) {
    if (const auto text = stat->StrValue()) return ParseComputeCapability(*text);
    const auto joined = stat->IntValue();
    return joined ? ParseComputeCapability(std::to_string(*joined)) : std::nullopt;
  }
  const auto major = plane.PlaneStat("compute_cap_major");
  if (!major || !major->IntValue()) return std::nullopt;
  const auto minor = plane.PlaneStat("compute_cap_minor");
  return std::array<int64_t, 2>{*major->IntValue(), minor ? minor->IntValue().value_or(0) : 0};
}

std::string DeviceName(const PlaneVisitor& plane) {
  for (std::string_view key : {"name", "device_name", "gpu_device_name"}) {
    if (const auto stat = plane.PlaneStat(key)) {
      if (const auto value = stat->StrValue(); value && !value->empty()) return std::string(*value);
    }
  }
  return "";
}

}  // namespace xplane
}  // namespace neuronprof
