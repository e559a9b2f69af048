// XSpaces that no capture of ours writes but a crafted or corrupt file can
// hold, for the JSON writers: strings that are not UTF-8 set straight into
// the protobuf (past the builders' repair), control characters, NaN and
// infinite doubles, and int64 extremes in every time field.
#ifndef NEURONPROF_TESTS_EXPORT_HOSTILE_SPACE_H_
#define NEURONPROF_TESTS_EXPORT_HOSTILE_SPACE_H_

#include <cstdint>
#include <limits>
#include <string>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

// A stray byte, a surrogate, an overlong and a cut sequence.
inline const std::string kBadUtf8 =
    "bad\xFF"
    "\xED\xA0\x80"
    "\xC0\xAF"
    "\xE2\x82";
// What every JSON reader must see: one U+FFFD per maximal subpart.
inline const std::string kBadUtf8Repaired =
    "bad\xEF\xBF\xBD"
    "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"
    "\xEF\xBF\xBD\xEF\xBF\xBD"
    "\xEF\xBF\xBD";
// Quotes, backslashes, every kind of control character.
inline const std::string kControlChars = "q\"b\\n\n\t\r\x01\x1f\x7f";

// Overwrites every string field the exporters read with raw bytes.
inline void SpoilStrings(tensorflow::profiler::XSpace* space) {
  space->add_hostnames("host " + kBadUtf8);
  space->add_warnings("warning " + kBadUtf8);
  for (auto& plane : *space->mutable_planes()) {
    for (auto& [id, metadata] : *plane.mutable_event_metadata()) {
      metadata.set_name(metadata.name() + " " + kBadUtf8 + kControlChars);
    }
    for (auto& [id, metadata] : *plane.mutable_stat_metadata()) {
      if (metadata.name() == "label") metadata.set_name("label " + kBadUtf8);
    }
    for (auto& line : *plane.mutable_lines()) line.set_name(line.name() + " " + kBadUtf8);
  }
}

// Host annotations, an operator, a runtime call and a kernel, each with a
// string stat (raw bytes), NaN, inf and -inf stats, and a label key whose
// name is spoiled.
inline tensorflow::profiler::XSpace HostileStringsSpace() {
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, 1700000000000000000, 1700000001000000000);
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XPlaneBuilder runtime(xplane::FindOrAddPlane(&space, "/host:CPU-GPU-runtime"));
  xplane::XPlaneBuilder gpu(xplane::FindOrAddPlane(&space, "/device:GPU:0"));
  auto* main = host.AddLine(7, "main", 0);
  auto add_values = [](xplane::XPlaneBuilder& plane, xplane::XEvent* event) {
    plane.AddStat(event, "text", std::string_view("x"));
    plane.AddStat(event, "nan", std::numeric_limits<double>::quiet_NaN());
    plane.AddStat(event, "inf", std::numeric_limits<double>::infinity());
    plane.AddStat(event, "minus_inf", -std::numeric_limits<double>::infinity());
    plane.AddStat(event, "label", int64_t{1});
  };
  add_values(host, host.AddEvent(main, host.EventMetadataId("marker"), 0, 5000000));
  auto* op = host.AddEvent(main, host.EventMetadataId("aten::op"), 1000000, 1000000);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(op, xplane::kOpInputDimsStat, std::string_view("[[1],[2]]"));
  host.AddStat(op, xplane::kOpInputValuesStat, std::string_view("[\"\",\"v\"]"));
  add_values(host, op);
  auto* call = runtime.AddEvent(runtime.AddLine(7, "main", 0),
                                runtime.EventMetadataId("cudaLaunchKernel"), 1500000, 100000);
  runtime.AddStat(call, xplane::kCorrelationIdStat, int64_t{5});
  add_values(runtime, call);
  auto* kernel =
      gpu.AddEvent(gpu.AddLine(3, "stream", 0), gpu.EventMetadataId("kernel"), 2000000, 100000);
  gpu.AddStat(kernel, xplane::kCorrelationIdStat, int64_t{5});
  gpu.AddStat(kernel, xplane::kDeviceEventKindStat, std::string_view("kernel"));
  add_values(gpu, kernel);
  SpoilStrings(&space);
  // Raw bytes in string values, and in JSON arrays copied verbatim.
  for (auto* plane : {host.plane(), runtime.plane(), gpu.plane()}) {
    for (auto& line : *plane->mutable_lines()) {
      for (auto& event : *line.mutable_events()) {
        for (auto& stat : *event.mutable_stats()) {
          const std::string& name = plane->stat_metadata().at(stat.metadata_id()).name();
          if (name == "text") stat.set_str_value(kBadUtf8 + kControlChars);
          if (name == xplane::kOpInputDimsStat) {
            stat.set_str_value("[[1],[\"" + kBadUtf8 + "\"]]");
          }
          if (name == xplane::kOpInputValuesStat) stat.set_str_value("[\"\xFF\"]");
        }
      }
    }
  }
  return space;
}

inline constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();

// Events at the int64 edges on a host, a runtime and a device line. Kept
// (times fit int64 ns): "edge_max" starts and ends at INT64_MAX ns,
// "edge_min" starts at INT64_MIN ns. Every other event ("overflow_*",
// "negative") must be left out and counted: kExtremeTimesLeftOut of them.
inline constexpr int kExtremeTimesLeftOut = 12;

inline tensorflow::profiler::XSpace ExtremeTimesSpace() {
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, 1700000000000000000, 1700000001000000000);
  // A device number at the int64 edge, and GPU 0 with the events.
  xplane::FindOrAddPlane(&space, "/device:GPU:9223372036854775807");
  for (const char* name : {xplane::kHostPlaneName, "/host:CPU-GPU-runtime", "/device:GPU:0"}) {
    xplane::XPlaneBuilder plane(xplane::FindOrAddPlane(&space, name));
    auto* high = plane.AddLine(1, "high", kMaxI64);
    auto* low = plane.AddLine(2, "low", kMinI64);
    auto add = [&](xplane::XLine* line, const char* event, int64_t offset_ps, int64_t duration_ps) {
      auto* e = plane.AddEvent(line, plane.EventMetadataId(event), offset_ps, duration_ps);
      plane.AddStat(e, xplane::kCorrelationIdStat, int64_t{9});
      // A double past int64 where an integer stat is read.
      plane.AddStat(e, xplane::kStreamIdStat, 1e300);
      plane.AddStat(e, xplane::kKernelDetailsStat,
                    std::string_view("grid:9223372036854775807,4,4 static_shared:"
                                     "9223372036854775807 dynamic_shared:9"));
      return e;
    };
    add(high, "edge_max", 0, 999);                // Start and end INT64_MAX ns.
    add(high, "overflow_offset", kMaxI64, 0);     // Start past INT64_MAX.
    add(high, "overflow_end", 0, 1000);           // End past INT64_MAX.
    add(low, "edge_min", 0, kMaxI64);             // Start INT64_MIN, long.
    add(low, "overflow_offset_low", kMinI64, 0);  // Start before INT64_MIN.
    add(low, "negative", 0, -5000);               // Negative duration.
    plane.AddPlaneStat("num_sms", int64_t{3});
  }
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_HOSTILE_SPACE_H_
