#include "src/xplane/stat_lookup.h"

#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace xplane {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XStat;

std::optional<int64_t> IntValue(const XStat* stat) {
  if (stat == nullptr) return std::nullopt;
  switch (stat->value_case()) {
    case XStat::kInt64Value:
      return stat->int64_value();
    case XStat::kUint64Value: {
      const uint64_t value = stat->uint64_value();
      if (value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return std::nullopt;
      }
      return static_cast<int64_t>(value);
    }
    case XStat::kDoubleValue: {
      // Only doubles an int64 holds: casting others is undefined behaviour.
      const double value = stat->double_value();
      if (!(value >= -0x1p63 && value < 0x1p63)) return std::nullopt;
      return static_cast<int64_t>(value);
    }
    case XStat::kStrValue: {
      int64_t value = 0;
      const std::string& text = stat->str_value();
      if (absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &value)) return value;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::string_view> StrValue(const XPlane& plane, const XStat* stat) {
  if (stat == nullptr) return std::nullopt;
  if (stat->value_case() == XStat::kStrValue) return stat->str_value();
  if (stat->value_case() == XStat::kRefValue) {
    auto it = plane.stat_metadata().find(static_cast<int64_t>(stat->ref_value()));
    return it == plane.stat_metadata().end() ? std::string_view() : it->second.name();
  }
  return std::nullopt;
}

std::string_view TextValue(const XPlane& plane, const XStat& stat, std::string* scratch) {
  if (auto text = StrValue(plane, &stat)) return *text;
  switch (stat.value_case()) {
    case XStat::kInt64Value:
      *scratch = absl::StrCat(stat.int64_value());
      break;
    case XStat::kUint64Value:
      *scratch = absl::StrCat(stat.uint64_value());
      break;
    case XStat::kDoubleValue:
      *scratch = absl::StrCat(stat.double_value());
      break;
    default:
      scratch->clear();
      break;
  }
  return *scratch;
}

}  // namespace xplane
}  // namespace neuronprof
