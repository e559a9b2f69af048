// The memory report on constructed captures: the peak, who made it, memory
// by operator, the per-step growth that shows a leak, and ill-formed
// reports flagged rather than turned into negative totals.
#include "src/analysis/memory/memory_report.h"

#include <catch2/catch.hpp>
#include <limits>
#include <string>

#include "src/analysis/memory/memory_annotator.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/analysis/operator_space.h"
#include "tests/export/map_churn.h"

namespace neuronprof {
namespace analysis {
namespace {

using tensorflow::profiler::XSpace;

constexpr int64_t kPs = 1000000;  // per microsecond

struct MemorySpec {
  int64_t at_us;
  bool free;
  int64_t bytes;
  uint64_t address;
  const char* op;  // tf_op stat; nullptr: none
  int64_t total;   // bytes_allocated after it; -1: not reported
  const char* allocator;
  const char* anomaly;  // nullptr: none
};

void AddMemory(XSpace* space, const MemorySpec& spec) {
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(space, xplane::kHostPlaneName));
  auto* line = space->mutable_planes(0)->mutable_lines(0);  // "main"
  auto* event = host.AddEvent(line,
                              host.EventMetadataId(spec.free ? xplane::kMemoryDeallocationEvent
                                                             : xplane::kMemoryAllocationEvent),
                              spec.at_us * kPs, 0);
  host.AddStat(event, xplane::kAllocatorNameStat, std::string_view(spec.allocator));
  host.AddStat(event, xplane::kAddressStat, spec.address);
  host.AddStat(event, xplane::kRequestedBytesStat, spec.bytes);
  host.AddStat(event, xplane::kAllocationBytesStat, spec.bytes);
  if (spec.total != -1) host.AddStat(event, xplane::kBytesAllocatedStat, spec.total);
  if (spec.op != nullptr) host.AddStat(event, xplane::kTfOpStat, std::string_view(spec.op));
  if (spec.anomaly != nullptr) {
    host.AddStat(event, xplane::kMemoryAnomalyStat, std::string_view(spec.anomaly));
  }
}

MemoryReport Report(const XSpace& space) {
  const OperatorEvents ops = CollectOperatorEvents(space);
  return BuildMemoryReport(space, ops, BuildStepBreakdown(space, ops));
}

// Three steps; each allocates 1000 B in addmm (freed in backward) and
// 200 B in relu that is never freed: a 200 B leak per step.
XSpace LeakySpace() {
  XSpace space = testing::MakeOperatorSpace(3, false);
  int64_t total = 0;
  for (int s = 0; s < 3; ++s) {
    const int64_t base = s * testing::kStepUs;
    const uint64_t a = 0x1000 + s, b = 0x2000 + s;
    total += 1000;
    AddMemory(&space, {base + 50, false, 1000, a, "aten::addmm", total, "cpu", nullptr});
    total += 200;
    AddMemory(&space, {base + 140, false, 200, b, "aten::relu", total, "cpu", nullptr});
    total -= 1000;
    AddMemory(&space, {base + 700, true, 1000, a, nullptr, total, "cpu", nullptr});
  }
  return space;
}

TEST_CASE("memory report: the peak, when it happened and the operator that made it") {
  const MemoryReport report = Report(LeakySpace());
  REQUIRE(report.allocators.size() == 1);
  const AllocatorMemory& cpu = report.allocators[0];
  CHECK(cpu.allocator == "cpu");
  CHECK(cpu.allocations == 6);
  CHECK(cpu.frees == 3);
  CHECK(cpu.peak_allocated_bytes == 1600);  // 2 leaked x 200 + 1000 + 200 in step 3
  CHECK(cpu.peak_time_ps == (2 * testing::kStepUs + 140) * kPs);
  CHECK(cpu.peak_op == "MLP/layer:fc1 > aten::relu");
  CHECK(cpu.start_bytes == 0);
  CHECK(cpu.end_bytes == 600);
  CHECK(cpu.anomalies == 0);
}

TEST_CASE("memory report: memory by operator pairs frees with the allocating op") {
  const MemoryReport report = Report(LeakySpace());
  const AllocatorMemory& cpu = report.allocators.at(0);
  REQUIRE(cpu.by_op.size() == 2);
  const OpMemory& relu = cpu.by_op[0];  // Most net bytes first.
  CHECK(relu.op == "aten::relu");
  CHECK(relu.allocations == 3);
  CHECK(relu.allocated_bytes == 600);
  CHECK(relu.freed_bytes == 0);
  CHECK(relu.net_bytes() == 600);
  CHECK(relu.calls == 3);
  CHECK(relu.steps_holding == 3);  // A block from every step: the leak.
  const OpMemory& addmm = cpu.by_op[1];
  CHECK(addmm.op == "aten::addmm");
  CHECK(addmm.allocated_bytes == 3000);
  CHECK(addmm.freed_bytes == 3000);  // Freed outside any op, still addmm's.
  CHECK(addmm.net_bytes() == 0);
  CHECK(addmm.steps_holding == 0);
}

TEST_CASE("memory report: a leak grows every step") {
  const MemoryReport report = Report(LeakySpace());
  const AllocatorMemory& cpu = report.allocators.at(0);
  REQUIRE(cpu.steps.size() == 3);
  CHECK(cpu.steps[0].step == "train 0");
  for (int s = 0; s < 3; ++s) {
    CHECK(cpu.steps[s].growth_bytes == 200);
    CHECK(cpu.steps[s].peak_bytes == 200 * s + 1200);
  }
}

TEST_CASE("memory report: memory events never become scopes of operators") {
  XSpace space = LeakySpace();
  for (const OperatorEvent& op : CollectOperatorEvents(space).ops) {
    CHECK(op.scope.find("Memory") == std::string::npos);
  }
}

TEST_CASE("memory report: ill-formed reports are flagged, totals never negative") {
  XSpace space = testing::MakeOperatorSpace(1, false);
  // A plug-in pool without totals: a free it never allocated, then an
  // allocation, then an out-of-memory report.
  AddMemory(&space, {10, true, 500, 0x9, nullptr, -1, "npu:0", nullptr});
  AddMemory(&space, {20, false, 300, 0xa, nullptr, -1, "npu:0", nullptr});
  AddMemory(&space, {30, false, 1 << 30, 0, nullptr, -1, "npu:0", "out of memory"});
  const MemoryReport report = Report(space);
  REQUIRE(report.allocators.size() == 1);
  const AllocatorMemory& npu = report.allocators[0];
  CHECK(npu.anomalies == 2);
  CHECK(npu.first_anomaly == "500 bytes freed beyond what was allocated");
  CHECK(npu.peak_allocated_bytes == 300);
  CHECK(npu.allocations == 1);  // The failed allocation holds nothing.
  CHECK(npu.end_bytes == 300);
}

TEST_CASE("memory report: byte counts at the int64 ends saturate, never overflow") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  XSpace space = testing::MakeOperatorSpace(1, false);
  // issue 27: one op frees 10 and then INT64_MAX bytes (10 + INT64_MAX
  // freed), and a crafted total of INT64_MIN was negated for its warning.
  AddMemory(&space, {10, false, 10, 0x1, "aten::empty", -1, "cpu", nullptr});
  AddMemory(&space, {11, true, 10, 0x1, nullptr, -1, "cpu", nullptr});
  AddMemory(&space, {12, false, kMax, 0x2, "aten::empty", -1, "cpu", nullptr});
  AddMemory(&space, {13, true, kMax, 0x2, nullptr, -1, "cpu", nullptr});
  AddMemory(&space, {14, false, 1, 0x3, "aten::empty", kMin, "cpu", nullptr});
  // A first event that frees INT64_MIN bytes (its change was negated).
  AddMemory(&space, {10, true, kMin, 0x4, nullptr, -1, "npu:0", nullptr});
  const MemoryReport report = Report(space);
  REQUIRE(report.allocators.size() == 2);
  const AllocatorMemory& cpu = report.allocators[0];
  REQUIRE(cpu.by_op.size() == 1);
  CHECK(cpu.by_op[0].freed_bytes == kMax);
  CHECK(cpu.by_op[0].allocated_bytes == kMax);
  CHECK(cpu.first_anomaly == "9223372036854775807 bytes freed beyond what was allocated");
  CHECK(cpu.end_bytes == 0);
  const AllocatorMemory& npu = report.allocators[1];
  CHECK(npu.start_bytes >= 0);
  CHECK(npu.end_bytes >= 0);
}

TEST_CASE("memory annotation derives device, allocation and peak stats, once") {
  XSpace space = LeakySpace();
  AnnotateMemoryEvents(&space);
  const std::string once = space.SerializeAsString();
  AnnotateMemoryEvents(&space);
  CHECK(space.SerializeAsString() == once);
  const xplane::PlaneVisitor plane(space.planes(0));
  std::vector<int64_t> peaks;
  plane.ForEachEvent([&](const xplane::EventVisitor& event) {
    if (!xplane::IsMemoryEventName(event.Name())) return;
    CHECK(event.StrStat(plane.StatId(xplane::kMemoryDeviceTypeStat)) == "CPU");
    CHECK(event.IntStat(plane.StatId(xplane::kDeviceIdStat)) == 0);
    CHECK(event.IntStat(plane.StatId(xplane::kAllocationBytesStat)) ==
          event.IntStat(plane.StatId(xplane::kRequestedBytesStat)));
    peaks.push_back(*event.IntStat(plane.StatId(xplane::kPeakBytesInUseStat)));
  });
  // Events in line order are in time order here: the running peak.
  // Totals 1000 1200 200 | 1200 1400 400 | 1400 1600 600.
  CHECK(peaks == std::vector<int64_t>{1000, 1200, 1200, 1200, 1400, 1400, 1400, 1600, 1600});
}

TEST_CASE("memory annotation walked beside the operator walk adds what it adds after it") {
  // The session walks the memory events while the operator walk runs and
  // adds both sets of stats afterwards, operators first.
  auto capture = [] {
    XSpace space = LeakySpace();
    AddMemory(&space, {20, false, 64, 0x9, "aten::empty", 64, "cuda:1", nullptr});
    AddMemory(&space, {30, false, 32, 0xa, "aten::empty", 96, "cuda:1", nullptr});
    AddMemory(&space, {40, false, 16, 0xb, "aten::empty", 16, "cuda:0", nullptr});
    return space;
  };
  XSpace in_turn = capture();
  AnnotateOperatorEvents(&in_turn);
  AnnotateMemoryEvents(&in_turn);
  XSpace side_by_side = capture();
  const MemoryAnnotation memory = PlanMemoryAnnotation(side_by_side);
  const OperatorEvents ops = CollectOperatorEvents(side_by_side);
  AnnotateOperatorEvents(ops, &side_by_side);
  AddMemoryAnnotation(memory, &side_by_side);
  CHECK(testing::DeterministicBytes(side_by_side) == testing::DeterministicBytes(in_turn));
  CHECK(memory.device_types == std::vector<std::string>{"CUDA", "CPU"});
}

TEST_CASE("annotations added in parts side by side give the bytes of one pass each") {
  // The session makes every id first (operators', then memory's) and adds
  // each set of stats in two parts on two cores: the ids must come out in
  // the order of one annotation after the other.
  auto capture = [] {
    XSpace space = LeakySpace();
    AddMemory(&space, {20, false, 64, 0x9, "aten::empty", 64, "cuda:1", nullptr});
    AddMemory(&space, {40, false, 16, 0xb, "aten::empty", 16, "cuda:0", nullptr});
    return space;
  };
  XSpace in_turn = capture();
  AnnotateOperatorEvents(&in_turn);
  AnnotateMemoryEvents(&in_turn);
  XSpace in_parts = capture();
  const MemoryAnnotation memory = PlanMemoryAnnotation(in_parts);
  {
    const OperatorEvents ops = CollectOperatorEvents(in_parts);
    REQUIRE(ops.ops.size() > 2);
    const OperatorAnnotation op_stats = PlanOperatorAnnotation(ops, &in_parts);
    ApplyOperatorAnnotation(ops, op_stats, 1, 2, &in_parts);  // Either part first.
    ApplyOperatorAnnotation(ops, op_stats, 0, 2, &in_parts);
  }
  const std::vector<MemoryAnnotationIds> memory_ids = ResolveMemoryStatIds(memory, &in_parts);
  AddMemoryStats(memory, memory_ids, 1, 2, &in_parts);
  AddMemoryStats(memory, memory_ids, 0, 2, &in_parts);
  CHECK(testing::DeterministicBytes(in_parts) == testing::DeterministicBytes(in_turn));
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
