// Captures in the worst shapes for the readers' work, each of `n` events:
// what a quadratic path in analysis or export would blow up on
// (tests/analysis/linear_work_test.cc, write_worst_capture.cc).
#ifndef NEURONPROF_TESTS_ANALYSIS_WORST_SHAPES_H_
#define NEURONPROF_TESTS_ANALYSIS_WORST_SHAPES_H_

#include <cstdint>
#include <string>

#include "proto/xplane.pb.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

// `n` steps, each nested in the one before (one thread holds them all),
// with an operator at the innermost level.
inline tensorflow::profiler::XSpace NestedSteps(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  const int64_t step = host.EventMetadataId("train");
  for (int i = 0; i < n; ++i) {
    auto* e = host.AddEvent(line, step, int64_t{i} * 1000, (int64_t{2} * n - 2 * i) * 1000);
    host.AddStat(e, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(e, xplane::kStepNumStat, int64_t{i});
  }
  auto* op = host.AddEvent(line, host.EventMetadataId("aten::relu"), int64_t{n} * 1000, 1000);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  return space;
}

// `n` markers of distinct names, each nested in the one before, each
// holding an operator (so every level is a distinct scope).
inline tensorflow::profiler::XSpace NestedMarkers(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  const int64_t relu = host.EventMetadataId("aten::relu");
  for (int i = 0; i < n; ++i) {
    const int64_t start = int64_t{i} * 10000;
    host.AddEvent(line, host.EventMetadataId("marker_" + std::to_string(i)), start,
                  (int64_t{n} - i) * 20000);
    auto* op = host.AddEvent(line, relu, start + 1, 1000);
    host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
    host.AddStat(op, xplane::kOpDirectionStat, std::string_view("bprop"));
  }
  return space;
}

// `n` runtime calls on one thread inside one long operator, none of them
// matched by a device event, plus `n` kernels whose correlation ids no
// call has.
inline tensorflow::profiler::XSpace UnmatchedRuntimeCalls(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* main = host.AddLine(1, "main", 0);
  const int64_t span = int64_t{n} * 2000 + 1000;
  auto* op = host.AddEvent(main, host.EventMetadataId("aten::mm"), 0, span);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  for (int i = 0; i < n; ++i) {  // Markers inside the op, each around a call.
    host.AddEvent(main, host.EventMetadataId("marker"), int64_t{i} * 2000 + 500, 1000);
  }
  xplane::XPlaneBuilder runtime(xplane::FindOrAddPlane(&space, "/host:CPU-GPU-runtime"));
  auto* calls = runtime.AddLine(1, "main", 0);
  const int64_t launch = runtime.EventMetadataId("cudaLaunchKernel");
  for (int i = 0; i < n; ++i) {
    auto* e = runtime.AddEvent(calls, launch, int64_t{i} * 2000 + 600, 500);
    runtime.AddStat(e, xplane::kCorrelationIdStat, int64_t{i + 1});
  }
  xplane::XPlaneBuilder gpu(xplane::FindOrAddPlane(&space, "/device:GPU:0"));
  auto* stream = gpu.AddLine(7, "Stream #7", 0);
  const int64_t kernel = gpu.EventMetadataId("kernel");
  for (int i = 0; i < n; ++i) {
    auto* e = gpu.AddEvent(stream, kernel, int64_t{i} * 2000 + 700, 500);
    gpu.AddStat(e, xplane::kCorrelationIdStat, int64_t{n + i + 1});
    gpu.AddStat(e, xplane::kDeviceEventKindStat, std::string_view("kernel"));
  }
  return space;
}

// One marker with `n` stats of distinct keys, its metadata holding `n`
// more (half of them the same keys).
inline tensorflow::profiler::XSpace ManyStatKeys(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  auto* metadata = host.NewEventMetadata("wide");
  for (int i = 0; i < n; ++i) {
    auto* stat = metadata->add_stats();
    stat->set_metadata_id(host.StatMetadataId("key_" + std::to_string(i + n / 2)));
    stat->set_int64_value(i);
  }
  auto* e = host.AddEvent(line, metadata->id(), 0, 1000);
  for (int i = 0; i < n; ++i) host.AddStat(e, "key_" + std::to_string(i), int64_t{i});
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_ANALYSIS_WORST_SHAPES_H_
