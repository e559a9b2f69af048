// Device memory through the plug-in API: allocations, frees and usage
// samples of a pool become memory events on the host plane, in the window,
// and the memory report shows the pool's timeline and flags a bad free.
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "neuronprof/device.h"
#include "neuronprof/neuronprof.h"
#include "src/analysis/memory/memory_report.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/session/capture_session.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

// Reports, at Flush, what the test scripted while the window was open;
// times are host epoch ns, given to the sink either as such or in a device
// clock running 1 s ahead.
struct MemoryScript {
  std::vector<DeviceMemoryEvent> events;
  std::vector<std::string> pools;  // Keeps the pool names alive.
  bool device_clock = false;
};

constexpr int64_t kDeviceAhead = 1'000'000'000;

class MemoryNpu : public DeviceCollector {
 public:
  explicit MemoryNpu(std::shared_ptr<MemoryScript> script) : script_(std::move(script)) {}
  std::string_view device_type() const override { return "NPU"; }
  absl::Status Start() override { return absl::OkStatus(); }
  absl::Status Stop() override { return absl::OkStatus(); }
  absl::Status Flush(DeviceActivitySink& sink) override {
    if (script_->device_clock) {
      const int64_t now = HostEpochNowNs();
      sink.AddClockSync(static_cast<uint64_t>(now + kDeviceAhead), now);
    }
    for (DeviceMemoryEvent event : script_->events) {
      if (script_->device_clock) {
        event.host_epoch_clock = false;
        event.time_ns += kDeviceAhead;
      }
      sink.AddMemoryEvent(event);
    }
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<MemoryScript> script_;
};

DeviceMemoryEvent Memory(DeviceMemoryEvent::Kind kind, uint64_t address, int64_t bytes) {
  DeviceMemoryEvent event;
  event.kind = kind;
  event.pool = "HBM";
  event.time_ns = static_cast<uint64_t>(HostEpochNowNs());
  event.host_epoch_clock = true;
  event.address = address;
  event.bytes = bytes;
  event.reserved_bytes = int64_t{16} << 30;
  return event;
}

tensorflow::profiler::XSpace CaptureMemory(const std::shared_ptr<MemoryScript>& script,
                                           bool bad_free) {
  REQUIRE(RegisterDeviceCollector("memory_npu", [script] {
            return std::make_unique<MemoryNpu>(script);
          }).ok());
  collectors::CollectorOptions options;
  options.device_tracer_level = 1;
  auto capture = session::CaptureSession::Start(options);
  REQUIRE(capture.ok());
  using Kind = DeviceMemoryEvent::Kind;
  DeviceMemoryEvent before = Memory(Kind::kAllocation, 0x10, 64);
  before.time_ns -= 3'600'000'000'000;  // An hour before the window.
  script->events.push_back(before);
  {
    StepTrace step("infer", 0);
    script->events.push_back(Memory(Kind::kAllocation, 0xa000, 1 << 20));
    script->events.push_back(Memory(Kind::kAllocation, 0xb000, 3 << 20));
    script->events.push_back(Memory(Kind::kFree, 0xa000, 1 << 20));
    if (bad_free) script->events.push_back(Memory(Kind::kFree, 0xdead, 8 << 20));
    DeviceMemoryEvent sample = Memory(Kind::kUsageSample, 0, 5 << 20);
    sample.pool = "scratch";
    script->events.push_back(sample);
  }
  auto result = (*capture)->Stop();
  REQUIRE(UnregisterDeviceCollector("memory_npu").ok());
  REQUIRE(result.ok());
  return std::move(result->space);
}

analysis::MemoryReport Report(const tensorflow::profiler::XSpace& space) {
  const analysis::OperatorEvents ops = analysis::CollectOperatorEvents(space);
  return analysis::BuildMemoryReport(space, ops, analysis::BuildStepBreakdown(space, ops));
}

TEST_CASE("device memory: pool events land on the host plane with their allocator") {
  for (const bool device_clock : {false, true}) {
    auto script = std::make_shared<MemoryScript>();
    script->device_clock = device_clock;
    const auto space = CaptureMemory(script, false);
    const auto* host = xplane::FindPlane(space, xplane::kHostPlaneName);
    REQUIRE(host != nullptr);
    std::vector<std::string> seen;
    xplane::PlaneVisitor plane(*host);
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      line.ForEachEvent([&](const xplane::EventVisitor& event) {
        if (!xplane::IsMemoryEventName(event.Name())) return;
        std::string scratch;
        seen.push_back(
            std::string(line.Name()) + "|" + std::string(event.Name()) + "|" +
            std::string(event.StatNamed(xplane::kAllocatorNameStat)->TextValue(&scratch)));
      });
    });
    // The allocation from an hour before is outside the window: dropped.
    CHECK(seen == std::vector<std::string>{
                      "NPU:0/HBM memory|MemoryAllocation|NPU:0/HBM",
                      "NPU:0/HBM memory|MemoryAllocation|NPU:0/HBM",
                      "NPU:0/HBM memory|MemoryDeallocation|NPU:0/HBM",
                      "NPU:0/scratch memory|MemoryUsage|NPU:0/scratch",
                  });
  }
}

TEST_CASE("device memory: the report shows each pool's peak and flags a bad free") {
  auto script = std::make_shared<MemoryScript>();
  const analysis::MemoryReport good = Report(CaptureMemory(script, false));
  REQUIRE(good.allocators.size() == 2);
  const analysis::AllocatorMemory& hbm = good.allocators[0];
  CHECK(hbm.allocator == "NPU:0/HBM");
  CHECK(hbm.peak_allocated_bytes == 4 << 20);  // No totals given: added up.
  CHECK(hbm.peak_reserved_bytes == int64_t{16} << 30);
  CHECK(hbm.end_bytes == 3 << 20);
  CHECK(hbm.anomalies == 0);
  REQUIRE(hbm.steps.size() == 1);
  CHECK(hbm.steps[0].growth_bytes == 3 << 20);
  CHECK(good.allocators[1].allocator == "NPU:0/scratch");
  CHECK(good.allocators[1].peak_allocated_bytes == 5 << 20);

  auto bad_script = std::make_shared<MemoryScript>();
  const analysis::MemoryReport bad = Report(CaptureMemory(bad_script, true));
  const analysis::AllocatorMemory& flagged = bad.allocators.at(0);
  CHECK(flagged.anomalies == 1);
  CHECK(flagged.end_bytes == 0);  // Clamped, never negative.
  CHECK(flagged.peak_allocated_bytes == 4 << 20);
}

}  // namespace
}  // namespace neuronprof
