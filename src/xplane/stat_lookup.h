// Reading stat values (stats themselves are found through the visitor,
// xplane_visitor.h). IntValue / StrValue are the one reader of stat values:
// analysis, export and tools all read numbers and strings through them, so
// a stat means the same number in the summary and in every trace file.
#ifndef NEURONPROF_SRC_XPLANE_STAT_LOOKUP_H_
#define NEURONPROF_SRC_XPLANE_STAT_LOOKUP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/xplane.pb.h"

namespace neuronprof {
namespace xplane {

// A stat as an int64, the one rule for every kind:
//   int64   as is;
//   uint64  when it fits int64 (above INT64_MAX: nullopt, never wrapped
//           to a negative number);
//   double  when finite and within int64, truncated toward zero;
//   string  when the whole text is a decimal integer within int64 ("42");
//   ref, bytes, no value, or no stat (nullptr): nullopt.
std::optional<int64_t> IntValue(const tensorflow::profiler::XStat* stat);

// A string stat's text, or an interned one's (ref_value: the name of the
// plane's stat metadata it points at; "" when that id is absent); nullopt
// for numbers, bytes or no stat (nullptr). No copy.
std::optional<std::string_view> StrValue(const tensorflow::profiler::XPlane& plane,
                                         const tensorflow::profiler::XStat* stat);

// The text of a string or interned (ref_value) stat without copying it;
// numbers are printed into `scratch`.
std::string_view TextValue(const tensorflow::profiler::XPlane& plane,
                           const tensorflow::profiler::XStat& stat, std::string* scratch);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_STAT_LOOKUP_H_
