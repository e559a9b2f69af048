// Device time in the app's terms: a device plug-in (the real API, through a
// real capture) whose kernels were launched inside user markers only, no
// framework operators. The summary must give each marker the device work
// launched directly inside it (linked by correlation id), count the FLOPs
// the runtime reported in MFU and the roofline, and give each step the
// device time launched inside it.
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/device.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/summary.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/session/capture_session.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace analysis {
namespace {

int64_t ThisThreadId() { return static_cast<int64_t>(syscall(SYS_gettid)); }

// A device runtime probe: each Launch() is a runtime call (host clock) that
// queues a kernel and a copy. The device "runs" them during the call, so
// every time lies inside the capture window and durations are known.
struct Probe {
  struct Launch {
    int64_t thread, start, end;
    uint64_t correlation_id;
  };
  std::mutex mutex;
  std::vector<Launch> launches;
  static constexpr int64_t kKernelFlops = 2'000'000'000;  // 2 GFLOP per kernel

  void LaunchOne() {
    const int64_t start = HostEpochNowNs();
    int64_t end = HostEpochNowNs();
    while (end <= start + 1) end = HostEpochNowNs();
    std::lock_guard<std::mutex> lock(mutex);
    launches.push_back({ThisThreadId(), start, end, launches.size() + 1});
  }
  // Device time of one launch's two events, in ps.
  static int64_t DevicePs(const Launch& launch) { return 2 * (launch.end - launch.start) * 1000; }
};

class ProbeCollector : public DeviceCollector {
 public:
  explicit ProbeCollector(Probe* probe) : probe_(probe) {}
  std::string_view device_type() const override { return "PROBE"; }
  absl::Status Start() override { return absl::OkStatus(); }
  absl::Status Stop() override { return absl::OkStatus(); }
  absl::Status Flush(DeviceActivitySink& sink) override {
    std::lock_guard<std::mutex> lock(probe_->mutex);
    sink.SetDeviceProperty(0, "peak_teraflops_per_second", "100");
    for (const Probe::Launch& launch : probe_->launches) {
      RuntimeCall call;
      call.thread_id = launch.thread;
      call.name = "probeLaunch";
      call.start_ns = static_cast<uint64_t>(launch.start);
      call.end_ns = static_cast<uint64_t>(launch.end);
      call.host_epoch_clock = true;
      call.correlation_id = launch.correlation_id;
      sink.AddRuntimeCall(call);
      DeviceEvent kernel;  // No clock sync: device times are host epoch times.
      kernel.name = "probe_gemm";
      kernel.start_ns = static_cast<uint64_t>(launch.start);
      kernel.end_ns = static_cast<uint64_t>(launch.end);
      kernel.correlation_id = launch.correlation_id;
      kernel.flops = Probe::kKernelFlops;
      sink.AddEvent(kernel);
      DeviceEvent copy = kernel;
      copy.kind = DeviceEventKind::kMemcpy;
      copy.name = "probe_copy";
      copy.queue_id = 1;
      copy.flops = -1;
      copy.bytes = 4096;
      sink.AddEvent(copy);
    }
    return absl::OkStatus();
  }

 private:
  Probe* probe_;
};

// Runs `body` inside a capture with the probe registered.
template <typename Body>
tensorflow::profiler::XSpace CaptureWithProbe(const char* name, Probe& probe, Body body) {
  REQUIRE(RegisterDeviceCollector(name, [&probe] {
            return std::make_unique<ProbeCollector>(&probe);
          }).ok());
  collectors::CollectorOptions options;
  options.device_tracer_level = 1;
  auto capture = session::CaptureSession::Start(options);
  REQUIRE(capture.ok());
  body();
  auto result = (*capture)->Stop();
  REQUIRE(UnregisterDeviceCollector(name).ok());
  REQUIRE(result.ok());
  return std::move(result->space);
}

const SpanStats* Marker(const Summary& summary, const std::string& name) {
  for (const SpanStats& row : summary.markers.markers) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("a plug-in's device work and FLOPs count for the marker that launched it") {
  Probe probe;
  const auto space = CaptureWithProbe("marker_probe", probe, [&] {
    StepTrace step("serve", 0);
    ScopedTrace op("matmul_op");
    for (int i = 0; i < 20; ++i) probe.LaunchOne();
  });
  const Summary summary = Summarize(space);

  REQUIRE(summary.device.events.size() == 40);
  CHECK(summary.device.to_marker == 40);
  CHECK(summary.device.to_neither == 0);
  CHECK(summary.device.unattributed == 40);  // no operators in this program
  CHECK(summary.device.reported_flops == 40'000'000'000);
  int64_t device_ps = 0;
  for (const Probe::Launch& launch : probe.launches) device_ps += Probe::DevicePs(launch);
  const SpanStats* row = Marker(summary, "matmul_op");
  REQUIRE(row != nullptr);
  CHECK(row->device_events == 40);
  CHECK(row->device_ps == device_ps);
  CHECK(row->device_flops == 40'000'000'000);

  // The step launched all of it on its own thread.
  REQUIRE(summary.steps.size() == 1);
  CHECK(summary.steps[0].launched_device_ps == device_ps);

  // MFU of the probe's plane: reported FLOPs / (step time x 100 TFLOP/s).
  const DeviceRoofline* plane = nullptr;
  for (const DeviceRoofline& d : summary.roofline.devices) {
    if (d.plane >= 0) plane = &d;
  }
  REQUIRE(plane != nullptr);
  CHECK(plane->reported);
  CHECK(plane->flops == 40'000'000'000);
  CHECK(summary.roofline.wall_ps == summary.steps[0].duration_ps);
  CHECK(plane->mfu == Approx(40e9 / (summary.steps[0].duration_ps * 1e-12 * 100e12)).epsilon(1e-9));
  CHECK(plane->mfu > 0);

  // A roofline point for the marker: its FLOPs over the device time of the
  // kernels that reported them (half of the marker's device time).
  REQUIRE(summary.roofline.markers.size() == 1);
  const MarkerRoofline& point = summary.roofline.markers[0];
  CHECK(point.marker == "matmul_op");
  CHECK(point.flops == 40'000'000'000);
  CHECK(point.device_ps == device_ps / 2);
  CHECK(point.point.achieved == Approx(40e9 / (device_ps / 2 * 1e-12)));

  const std::string text = FormatSummaryText(summary, 20);
  INFO(text);
  CHECK(Contains(text, "40 to a user marker around the launch, 0 to neither"));
  CHECK(Contains(text, "40.00G FLOPs reported by the runtime"));
  CHECK(Contains(text, "Device(ms)"));
  CHECK(Contains(text, "Launched(ms)"));
  CHECK(Contains(text, "(marker)"));
  CHECK_FALSE(Contains(text, "MFU 0.00%"));
}

TEST_CASE("SummarizeMarkers gives each marker the device work it launched") {
  Probe probe;
  REQUIRE(RegisterDeviceCollector("in_process_probe", [&probe] {
            return std::make_unique<ProbeCollector>(&probe);
          }).ok());
  testing::TempDir dir;
  ProfilerOptions options;
  options.port = 0;  // no capture server: this test reads the local result
  options.logdir = dir.path();
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  Profiler profiler(options);
  {
    ScopedTrace op("matmul_op");
    for (int i = 0; i < 20; ++i) probe.LaunchOne();
  }
  auto result = profiler.Stop();
  REQUIRE(UnregisterDeviceCollector("in_process_probe").ok());
  REQUIRE(result.ok());
  auto summary = SummarizeMarkers(*result);
  REQUIRE(summary.ok());
  int64_t device_ns = 0;
  for (const Probe::Launch& launch : probe.launches) device_ns += Probe::DevicePs(launch) / 1000;
  const MarkerStatsRow* row = nullptr;
  for (const MarkerStatsRow& marker : summary->markers) {
    if (marker.name == "matmul_op") row = &marker;
    CHECK(marker.name != "probeLaunch");  // runtime calls are not markers
  }
  REQUIRE(row != nullptr);
  CHECK(row->device_events == 40);
  CHECK(row->device_ns == device_ns);
  CHECK(row->device_flops == 40'000'000'000);
}

TEST_CASE("device work goes to the innermost marker around the launch, on the launching thread") {
  Probe probe;
  const auto space = CaptureWithProbe("nesting_probe", probe, [&] {
    {
      ScopedTrace outer("batch");
      {
        ScopedTrace inner("forward");
        probe.LaunchOne();
        probe.LaunchOne();
      }
      probe.LaunchOne();  // after forward closed: batch's own
      // Another thread's marker, open while this thread launches: its
      // launches are its own and this thread's are not its.
      std::thread worker([&] {
        ScopedTrace other("decode");
        probe.LaunchOne();
      });
      worker.join();
    }
    probe.LaunchOne();  // outside every marker
  });
  const Summary summary = Summarize(space);
  REQUIRE(probe.launches.size() == 5);
  CHECK(summary.device.to_marker == 8);
  CHECK(summary.device.to_neither == 2);
  const auto& l = probe.launches;
  const SpanStats* forward = Marker(summary, "forward");
  const SpanStats* batch = Marker(summary, "batch");
  const SpanStats* decode = Marker(summary, "decode");
  REQUIRE(forward != nullptr);
  REQUIRE(batch != nullptr);
  REQUIRE(decode != nullptr);
  CHECK(forward->device_events == 4);
  CHECK(forward->device_ps == Probe::DevicePs(l[0]) + Probe::DevicePs(l[1]));
  CHECK(batch->device_events == 2);  // not inclusive of forward's
  CHECK(batch->device_ps == Probe::DevicePs(l[2]));
  CHECK(decode->device_events == 2);
  CHECK(decode->device_ps == Probe::DevicePs(l[3]));
  CHECK(decode->device_flops == Probe::kKernelFlops);
}

TEST_CASE("MFU's wall time counts concurrent steps (a server's workers) once") {
  Probe probe;
  std::promise<void> first_began, second_began;
  const auto space = CaptureWithProbe("concurrent_probe", probe, [&] {
    // Two workers whose steps overlap for sure: each step ends only once
    // the other has begun.
    std::thread first([&] {
      StepTrace step("batch", 0);
      probe.LaunchOne();
      first_began.set_value();
      second_began.get_future().wait();
    });
    first_began.get_future().wait();
    std::thread second([&] {
      StepTrace step("batch", 1);
      second_began.set_value();
      probe.LaunchOne();
    });
    first.join();
    second.join();
  });
  const Summary summary = Summarize(space);
  REQUIRE(summary.steps.size() == 2);
  const StepBreakdown& a = summary.steps[0];
  const StepBreakdown& b = summary.steps[1];
  const int64_t covered =
      std::max(a.start_ps + a.duration_ps, b.start_ps + b.duration_ps) - a.start_ps;
  CHECK(b.start_ps < a.start_ps + a.duration_ps);  // they overlap
  CHECK(summary.roofline.wall_ps == covered);
  CHECK(summary.roofline.wall_ps < a.duration_ps + b.duration_ps);
  // Each step launched its own work, on its own thread.
  CHECK(a.launched_device_ps == Probe::DevicePs(probe.launches[0]));
  CHECK(b.launched_device_ps == Probe::DevicePs(probe.launches[1]));
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
