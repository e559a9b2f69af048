// Captures in the worst shapes for the readers' work, each of `n` events:
// what a quadratic path in analysis or export would blow up on
// (tests/analysis/report/linear_work_test.cc, write_worst_capture.cc).
#ifndef NEURONPROF_TESTS_ANALYSIS_WORST_SHAPES_H_
#define NEURONPROF_TESTS_ANALYSIS_WORST_SHAPES_H_

#include <cstdint>
#include <string>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
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

// Adds `n` steps on a line of their own to `space`'s host plane, each
// nested in the one before, the outermost `span_ps` long from the start.
inline void AddNestedSteps(tensorflow::profiler::XSpace* space, int n, int64_t span_ps) {
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(space, xplane::kHostPlaneName));
  auto* line = host.AddLine(999, "nested steps", 0);
  const int64_t step = host.EventMetadataId("outer");
  for (int i = 0; i < n; ++i) {
    auto* e = host.AddEvent(line, step, i, span_ps - 2 * int64_t{i});
    host.AddStat(e, xplane::kRootLevelStat, int64_t{1});
  }
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

// One step holding `n` producers, each consumed on another thread after
// the step: every wait is placed inside that one step among its `n`
// children (a server's batch step, a queue of many requests).
inline tensorflow::profiler::XSpace ProducersInOneStep(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* main_line = host.AddLine(1, "main", 0);
  auto* worker = host.AddLine(2, "worker", 0);
  auto* step = host.AddEvent(main_line, host.EventMetadataId("batch"), 0, int64_t{n} * 2000 + 1000);
  host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
  host.AddStat(step, xplane::kStepNumStat, int64_t{0});
  const int64_t enqueue = host.EventMetadataId("enqueue"), infer = host.EventMetadataId("infer");
  for (int i = 0; i < n; ++i) {
    auto* producer = host.AddEvent(main_line, enqueue, int64_t{i} * 2000 + 1, 1000);
    host.AddStat(producer, xplane::kProducerTypeStat, int64_t{1});
    host.AddStat(producer, xplane::kProducerIdStat, int64_t{i + 1});
    auto* consumer = host.AddEvent(worker, infer, int64_t{n} * 2000 + 2000 + i * 10, 5);
    host.AddStat(consumer, xplane::kConsumerTypeStat, int64_t{1});
    host.AddStat(consumer, xplane::kConsumerIdStat, int64_t{i + 1});
  }
  return space;
}

// `n` producers, each nested in the one before inside a step, each
// consumed on another thread: the flows' markers are `n` deep.
inline tensorflow::profiler::XSpace NestedProducers(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* main_line = host.AddLine(1, "main", 0);
  auto* worker = host.AddLine(2, "worker", 0);
  auto* step = host.AddEvent(main_line, host.EventMetadataId("request"), 0, int64_t{4} * n * 1000);
  host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
  host.AddStat(step, xplane::kStepNumStat, int64_t{0});
  const int64_t stage = host.EventMetadataId("stage"), infer = host.EventMetadataId("infer");
  for (int i = 0; i < n; ++i) {
    auto* producer =
        host.AddEvent(main_line, stage, int64_t{i} * 1000 + 1, (int64_t{2} * n - 2 * i) * 1000);
    host.AddStat(producer, xplane::kProducerTypeStat, int64_t{1});
    host.AddStat(producer, xplane::kProducerIdStat, int64_t{i + 1});
    auto* consumer = host.AddEvent(worker, infer, int64_t{i} * 1000 + 500, 100);
    host.AddStat(consumer, xplane::kConsumerTypeStat, int64_t{1});
    host.AddStat(consumer, xplane::kConsumerIdStat, int64_t{i + 1});
  }
  return space;
}

// `n` runtime calls, none of them matched by a device event (`n` kernels
// carry correlation ids no call has), in the worst places for finding the
// op that encloses a call: thread 1 has an op around `n` nested markers,
// half the calls inside the innermost; thread 2 has `n` nested ops that
// end before its calls, inside the outermost op.
inline tensorflow::profiler::XSpace UnmatchedRuntimeCalls(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  const int64_t span = int64_t{n} * 4000;
  auto op = [&](tensorflow::profiler::XLine* line, int64_t start, int64_t duration) {
    auto* e = host.AddEvent(line, host.EventMetadataId("aten::mm"), start, duration);
    host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
  };
  auto* markers = host.AddLine(1, "markers", 0);
  op(markers, 0, span);
  for (int i = 1; i <= n; ++i) {
    host.AddEvent(markers, host.EventMetadataId("marker"), i, span - 2 * i);
  }
  auto* ops = host.AddLine(2, "ops", 0);
  op(ops, 0, span);
  for (int i = 1; i <= n; ++i) op(ops, i, 2 * (int64_t{n} - i) + 2);
  xplane::XPlaneBuilder runtime(xplane::FindOrAddPlane(&space, "/host:CPU-GPU-runtime"));
  const int64_t launch = runtime.EventMetadataId("cudaLaunchKernel");
  for (int64_t tid : {1, 2}) {
    auto* calls = runtime.AddLine(tid, "calls", 0);
    for (int i = 0; i < n / 2; ++i) {
      auto* e = runtime.AddEvent(calls, launch, 2 * int64_t{n} + 10 + i * 10, 5);
      runtime.AddStat(e, xplane::kCorrelationIdStat, tid * n + i + 1);
    }
  }
  xplane::XPlaneBuilder gpu(xplane::FindOrAddPlane(&space, "/device:GPU:0"));
  auto* stream = gpu.AddLine(7, "Stream #7", 0);
  const int64_t kernel = gpu.EventMetadataId("kernel");
  for (int i = 0; i < n; ++i) {
    auto* e = gpu.AddEvent(stream, kernel, 2 * int64_t{n} + i * 10, 5);
    gpu.AddStat(e, xplane::kCorrelationIdStat, int64_t{3} * n + i + 1);
    gpu.AddStat(e, xplane::kDeviceEventKindStat, std::string_view("kernel"));
  }
  return space;
}

// `n` steps one after another on one thread, each holding one allocation
// of a block never freed: the memory report's per-step and per-allocation
// lookups.
inline tensorflow::profiler::XSpace MemoryPerStep(int n) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 0);
  const int64_t step = host.EventMetadataId("train");
  const int64_t alloc = host.EventMetadataId(xplane::kMemoryAllocationEvent);
  for (int i = 0; i < n; ++i) {
    auto* e = host.AddEvent(line, step, int64_t{i} * 1000, 1000);
    host.AddStat(e, xplane::kRootLevelStat, int64_t{1});
    auto* m = host.AddEvent(line, alloc, int64_t{i} * 1000 + 500, 0);
    host.AddStat(m, xplane::kAllocatorNameStat, std::string_view("cpu"));
    host.AddStat(m, xplane::kAddressStat, int64_t{i + 1});
    host.AddStat(m, xplane::kAllocationBytesStat, int64_t{64});
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
