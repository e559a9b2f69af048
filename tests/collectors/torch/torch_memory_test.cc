// libtorch memory in kOperator captures: every allocation and free of the
// CPU allocator during the window, with libtorch's own totals, on the
// thread that made it, and the slot left free for libtorch's profilers.
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/torch.h"
#include "src/analysis/memory/memory_report.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/xplane/schema.h"
#include "tests/collectors/torch/torch_capture.h"

namespace neuronprof {
namespace {

using testing::CaptureOperators;
using testing::HostEvents;
using testing::Op;

bool IsMemoryEvent(const Op& op) {
  return op.name == xplane::kMemoryAllocationEvent || op.name == xplane::kMemoryDeallocationEvent;
}

int64_t Int(const Op& op, const char* stat) {
  REQUIRE(op.has(stat));
  return std::stoll(op.stat(stat));
}

void TrainSteps(int steps) {
  torch::manual_seed(0);
  torch::nn::Sequential mlp(torch::nn::Linear(10, 32), torch::nn::ReLU(), torch::nn::Linear(32, 2));
  const auto x = torch::randn({8, 10});
  for (int i = 0; i < steps; ++i) {
    mlp->zero_grad();
    mlp->forward(x).sum().backward();
  }
}

TEST_CASE("memory: every allocation and free carries libtorch's running totals") {
  std::vector<Op> memory;
  for (const Op& op : HostEvents(CaptureOperators([] { TrainSteps(3); }).space)) {
    if (IsMemoryEvent(op)) memory.push_back(op);
  }
  int allocations = 0, frees = 0, inside_ops = 0;
  for (size_t i = 0; i < memory.size(); ++i) {
    const Op& event = memory[i];
    const bool allocation = event.name == xplane::kMemoryAllocationEvent;
    allocations += allocation;
    frees += !allocation;
    inside_ops += event.has(xplane::kTfOpStat);
    CHECK(event.stat(xplane::kAllocatorNameStat) == "cpu");
    CHECK(event.stat(xplane::kMemoryDeviceTypeStat) == "CPU");
    CHECK(event.start_ps == event.end_ps);
    CHECK(Int(event, xplane::kAddressStat) != 0);
    const int64_t bytes = Int(event, xplane::kRequestedBytesStat);
    CHECK(bytes > 0);
    CHECK(Int(event, xplane::kBytesAllocatedStat) >= 0);
    // One thread, every event kept: libtorch's total after each event is
    // the one before it plus or minus this event's bytes.
    if (i > 0) {
      const int64_t before = Int(memory[i - 1], xplane::kBytesAllocatedStat);
      CHECK(Int(event, xplane::kBytesAllocatedStat) == before + (allocation ? bytes : -bytes));
    }
  }
  // 3 steps of a 2-layer MLP, forward and backward: tens of each.
  CHECK(allocations >= 30);
  CHECK(frees >= 30);
  CHECK(inside_ops >= allocations);  // Allocations happen inside operators.
}

TEST_CASE("memory: allocations name the innermost operator") {
  bool addmm = false;
  for (const Op& op : HostEvents(CaptureOperators([] { TrainSteps(1); }).space)) {
    if (op.name == xplane::kMemoryAllocationEvent && op.stat(xplane::kTfOpStat) == "aten::empty") {
      addmm = true;
    }
  }
  CHECK(addmm);
}

TEST_CASE("memory: profile_memory = false records operators without memory") {
  TorchOperatorOptions options;
  options.profile_memory = false;
  const auto ops = HostEvents(CaptureOperators([] { TrainSteps(1); }, options).space);
  CHECK(testing::Named(ops, "aten::addmm").size() == 2);
  for (const Op& op : ops) CHECK_FALSE(IsMemoryEvent(op));
}

TEST_CASE("memory: profile_memory = false puts no reporter on the allocator's path") {
  // libtorch's allocators ask the reporter in the thread's PROFILER_STATE
  // slot on every allocation and free (c10::memoryProfilingEnabled): with
  // memory off, the slot stays empty, so allocations call nothing of ours.
  TorchOperatorOptions options;
  options.profile_memory = false;
  int reporters_seen = 0;
  const auto ops = testing::CaptureOps(
      [&] {
        const auto tensor = torch::ones({4});
        for (int i = 0; i < 3; ++i) {
          // A view allocates no storage: what the op's start left in the
          // slot is still there after it.
          const auto view = tensor.view({2, 2});
          reporters_seen +=
              c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE) != nullptr;
          reporters_seen += c10::memoryProfilingEnabled();
        }
      },
      options);
  CHECK(testing::Named(ops, "aten::view").size() == 3);
  CHECK(reporters_seen == 0);
}

TEST_CASE("memory: after the window libtorch's own profiler can start on the thread") {
  CaptureOperators([] { TrainSteps(1); });
  // The thread's next allocation after the window takes neuronprof's
  // reporter out of libtorch's profiler slot; were it left there,
  // enableProfilerLegacy would throw "Profiler is already enabled".
  const auto after = torch::ones({4});
  torch::autograd::profiler::ProfilerConfig config(torch::autograd::profiler::ProfilerState::CPU,
                                                   false, /*profile_memory=*/true);
  REQUIRE_NOTHROW(torch::autograd::profiler::enableProfilerLegacy(config));
  REQUIRE_NOTHROW(torch::autograd::profiler::disableProfilerLegacy());
}

TEST_CASE("memory: a thread with libtorch's profiler active is counted, not overridden") {
  torch::autograd::profiler::ProfilerConfig config(torch::autograd::profiler::ProfilerState::CPU,
                                                   false, /*profile_memory=*/true);
  torch::autograd::profiler::enableProfilerLegacy(config);
  const auto capture = CaptureOperators([] { TrainSteps(1); });
  // libtorch's profiler still owns the slot and ends cleanly.
  REQUIRE_NOTHROW(torch::autograd::profiler::disableProfilerLegacy());
  for (const Op& op : HostEvents(capture.space)) CHECK_FALSE(IsMemoryEvent(op));
  bool warned = false;
  for (const std::string& warning : capture.result.warnings) {
    warned |= warning.find("libtorch's own profiler was active") != std::string::npos;
  }
  CHECK(warned);
}

TEST_CASE("memory: an allocator's out-of-memory report is recorded and flagged") {
  constexpr int64_t kAsked = int64_t{1} << 40;
  const auto capture = CaptureOperators([] {
    const auto t = torch::ones({16});  // An op: the thread's reporter is in place.
    // What libtorch's allocators call when an allocation fails.
    c10::reportOutOfMemoryToProfiler(kAsked, 4096, 8192, c10::Device(c10::kCPU));
  });
  int out_of_memory = 0;
  for (const Op& op : HostEvents(capture.space)) {
    if (op.name != xplane::kMemoryAllocationEvent || !op.has(xplane::kMemoryAnomalyStat)) continue;
    ++out_of_memory;
    CHECK(op.stat(xplane::kMemoryAnomalyStat) == "out of memory");
    CHECK(Int(op, xplane::kRequestedBytesStat) == kAsked);
    CHECK(Int(op, xplane::kBytesAllocatedStat) == 4096);
  }
  CHECK(out_of_memory == 1);
  // The summary's report flags it; the failed allocation holds nothing.
  const analysis::OperatorEvents ops = analysis::CollectOperatorEvents(capture.space);
  const analysis::MemoryReport report = analysis::BuildMemoryReport(
      capture.space, ops, analysis::BuildStepBreakdown(capture.space, ops));
  REQUIRE(report.allocators.size() == 1);
  CHECK(report.allocators[0].anomalies == 1);
  CHECK(report.allocators[0].first_anomaly.find("out of memory") != std::string::npos);
  CHECK(report.allocators[0].peak_allocated_bytes < kAsked);
}

TEST_CASE("memory: a remote capture at host_tracer_level 2 records libtorch's allocations") {
  int allocations = 0, with_op = 0;
  for (const Op& op : testing::RemoteCaptureOps(2, [] { TrainSteps(1); })) {
    if (op.name != xplane::kMemoryAllocationEvent) continue;
    ++allocations;
    with_op += op.has(xplane::kTfOpStat);
    CHECK(op.stat(xplane::kAllocatorNameStat) == "cpu");
  }
  CHECK(allocations > 0);
  CHECK(with_op == allocations);
}

}  // namespace
}  // namespace neuronprof
