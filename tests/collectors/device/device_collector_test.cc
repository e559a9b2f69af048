// Device plug-ins through the real capture path: a scripted NPU runtime
// reports kernels, copies and launches; the test checks the planes, lines,
// stats, host-clock times, drops, errors and the Chrome trace's flows.
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "neuronprof/device.h"
#include "neuronprof/neuronprof.h"
#include "src/collectors/device/clock_fit.h"
#include "src/export/chrome_trace.h"
#include "src/session/capture_session.h"
#include "src/xplane/plain_name.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/trace_text.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XLine;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using tensorflow::profiler::XStat;

int64_t ThisThreadId() { return static_cast<int64_t>(syscall(SYS_gettid)); }

// The fake device clock: host = kHostBase + (device - kDeviceBase) * kRate.
// The rate is off by 0.1%, so an offset-only mapping would misplace events
// by milliseconds against the far-apart sync pairs.
constexpr uint64_t kDeviceBase = 5'000'000'000;
constexpr long double kRate = 1.001L;

struct Launch {
  std::string name;
  int device_id;
  int64_t queue_id;
  DeviceEventKind kind;
  int64_t thread_id;
  int64_t call_start, call_end;  // host epoch ns
  uint64_t correlation_id;
};

// What the scripted runtime saw; the test drives it between Start and Stop.
struct NpuScript {
  std::mutex mutex;
  int64_t host_base = 0;  // Host time of device time kDeviceBase.
  int64_t window_start = 0, window_stop = 0;
  std::vector<Launch> launches;
  bool started = false;
  int flushes = 0;
  absl::Status start_status, flush_status;
  std::string device_type = "NPU";

  uint64_t ToDevice(int64_t host_ns) const {
    return kDeviceBase + static_cast<uint64_t>(std::llround(static_cast<double>(
                             static_cast<long double>(host_ns - host_base) / kRate)));
  }
  // Where the runtime "executed" launch i: inside (call end, window stop).
  std::pair<int64_t, int64_t> DeviceSpan(size_t i) const {
    const Launch& launch = launches[i];
    const int64_t room = window_stop - launch.call_end;
    const int64_t start = launch.call_end + room / 4;
    return {start, start + room / 4};
  }

  void Enqueue(std::string name, int device_id, int64_t queue_id, DeviceEventKind kind) {
    ScopedTrace call("npuLaunch");
    const int64_t begin = HostEpochNowNs();
    const int64_t end = HostEpochNowNs() + 1;
    std::lock_guard<std::mutex> lock(mutex);
    launches.push_back({std::move(name), device_id, queue_id, kind, ThisThreadId(), begin, end,
                        launches.size() + 100});
  }
};

class ScriptedNpu : public DeviceCollector {
 public:
  explicit ScriptedNpu(std::shared_ptr<NpuScript> script) : script_(std::move(script)) {}
  std::string_view device_type() const override { return script_->device_type; }
  absl::Status Start() override {
    std::lock_guard<std::mutex> lock(script_->mutex);
    if (!script_->start_status.ok()) return script_->start_status;
    script_->started = true;
    script_->window_start = HostEpochNowNs();
    script_->host_base = script_->window_start;
    return absl::OkStatus();
  }
  absl::Status Stop() override {
    std::lock_guard<std::mutex> lock(script_->mutex);
    script_->window_stop = HostEpochNowNs();
    return absl::OkStatus();
  }
  absl::Status Flush(DeviceActivitySink& sink) override {
    std::lock_guard<std::mutex> lock(script_->mutex);
    NpuScript& s = *script_;
    ++s.flushes;
    // Two exact readings of the fake clock, 10 s apart.
    sink.AddClockSync(kDeviceBase, s.host_base);
    sink.AddClockSync(kDeviceBase + 10'000'000'000,
                      s.host_base + static_cast<int64_t>(10'000'000'000 * kRate));
    sink.SetDeviceProperty(0, "name", "FakeNPU v1");
    sink.SetDeviceProperty(0, "memory_bytes", int64_t{16} << 30);
    const TraceArg extra[] = {{"engine", "tensor"}, {"tiles", 12}};
    for (size_t i = 0; i < s.launches.size(); ++i) {
      const Launch& launch = s.launches[i];
      RuntimeCall call;
      call.thread_id = launch.thread_id;
      call.name = "npuLaunchKernel";
      call.correlation_id = launch.correlation_id;
      if (i % 2 == 0) {  // Half in host epoch time, half in device time.
        call.host_epoch_clock = true;
        call.start_ns = static_cast<uint64_t>(launch.call_start);
        call.end_ns = static_cast<uint64_t>(launch.call_end);
      } else {
        call.start_ns = s.ToDevice(launch.call_start);
        call.end_ns = s.ToDevice(launch.call_end);
      }
      sink.AddRuntimeCall(call);
      const auto [start, end] = s.DeviceSpan(i);
      DeviceEvent event;
      event.kind = launch.kind;
      event.device_id = launch.device_id;
      event.queue_id = launch.queue_id;
      event.name = launch.name;
      event.start_ns = s.ToDevice(start);
      event.end_ns = s.ToDevice(end);
      event.correlation_id = launch.correlation_id;
      if (launch.kind == DeviceEventKind::kKernel) {
        event.details = "grid:4,1,1 block:128,1,1";
        event.flops = 2048;
        event.framework_op = "MLP/fc1/addmm:Addmm";
        event.stats = extra;
        event.num_stats = 2;
      } else {
        event.details = "kind:HtoD";
        event.bytes = 4096;
      }
      sink.AddEvent(event);
    }
    // Work from before and after the window.
    DeviceEvent early;
    early.name = "stale_kernel";
    early.start_ns = s.ToDevice(s.window_start - 2'000'000'000);
    early.end_ns = early.start_ns + 10;
    sink.AddEvent(early);
    DeviceEvent late = early;
    late.start_ns = s.ToDevice(s.window_stop + 2'000'000'000);
    late.end_ns = late.start_ns + 10;
    sink.AddEvent(late);
    sink.AddDropped(3, "activity buffer overflow");
    return s.flush_status;
  }

 private:
  std::shared_ptr<NpuScript> script_;
};

// Registers a scripted plug-in for one test and removes it afterwards.
class Registration {
 public:
  Registration(std::string name, std::shared_ptr<NpuScript> script) : name_(std::move(name)) {
    status_ =
        RegisterDeviceCollector(name_, [script] { return std::make_unique<ScriptedNpu>(script); });
  }
  ~Registration() {
    if (status_.ok()) UnregisterDeviceCollector(name_).IgnoreError();
  }
  const absl::Status& status() const { return status_; }

 private:
  std::string name_;
  absl::Status status_;
};

using testing::EventName;
using testing::FindLine;
using testing::FindPlaneStat;
using testing::FindStat;

int64_t EventStartEpochNs(const XSpace& space, const XLine& line, const XEvent& event) {
  return xplane::ProfileStartEpochNs(space) + line.timestamp_ns() + event.offset_ps() / 1000;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool AnyContains(const google::protobuf::RepeatedPtrField<std::string>& texts, const std::string& a,
                 const std::string& b = "") {
  for (const std::string& text : texts) {
    if (Contains(text, a) && Contains(text, b)) return true;
  }
  return false;
}

session::CaptureResult Capture(NpuScript& script, int device_tracer_level = 1) {
  collectors::CollectorOptions options;
  options.device_tracer_level = device_tracer_level;
  auto capture = session::CaptureSession::Start(options);
  REQUIRE(capture.ok());
  {
    StepTrace step("train", 0);
    script.Enqueue("matmul", 0, 1, DeviceEventKind::kKernel);
    script.Enqueue("Memcpy HtoD", 0, 2, DeviceEventKind::kMemcpy);
    script.Enqueue("relu", 1, 5, DeviceEventKind::kKernel);
    script.Enqueue("Memset", 1, 5, DeviceEventKind::kMemset);
  }
  auto result = (*capture)->Stop();
  REQUIRE(result.ok());
  return std::move(*result);
}

TEST_CASE("device activity becomes planes per device and lines per queue") {
  auto script = std::make_shared<NpuScript>();
  Registration registration("scripted_npu", script);
  REQUIRE(registration.status().ok());
  session::CaptureResult result = Capture(*script);
  const XSpace& space = result.space;
  CHECK(space.errors_size() == 0);
  REQUIRE(xplane::FindPlane(space, xplane::kHostPlaneName) != nullptr);

  const XPlane* npu0 = xplane::FindPlane(space, "/device:CUSTOM:NPU:0");
  const XPlane* npu1 = xplane::FindPlane(space, "/device:CUSTOM:NPU:1");
  REQUIRE(npu0 != nullptr);
  REQUIRE(npu1 != nullptr);
  CHECK(npu0->id() != npu1->id());  // Separate processes in xprof.

  // Plane stats: the device's properties, id and type.
  const XStat* name = FindPlaneStat(*npu0, "name");
  REQUIRE(name != nullptr);
  CHECK(name->str_value() == "FakeNPU v1");
  const XStat* memory = FindPlaneStat(*npu0, "memory_bytes");
  REQUIRE(memory != nullptr);
  CHECK(memory->int64_value() == (int64_t{16} << 30));
  CHECK(FindPlaneStat(*npu1, xplane::kDeviceIdStat)->int64_value() == 1);
  CHECK(FindPlaneStat(*npu1, xplane::kDeviceTypeStat)->str_value() == "NPU");

  // Lines: one per queue, named like TSL's GPU streams.
  REQUIRE(npu0->lines_size() == 2);
  const XLine* queue1 = FindLine(*npu0, 1);
  const XLine* queue2 = FindLine(*npu0, 2);
  const XLine* queue5 = FindLine(*npu1, 5);
  REQUIRE(queue1 != nullptr);
  REQUIRE(queue2 != nullptr);
  REQUIRE(queue5 != nullptr);
  CHECK(queue1->name() == "Stream #1(Kernel)");
  CHECK(queue2->name() == "Stream #2(Memcpy)");
  CHECK(queue5->name() == "Stream #5(Kernel,Memset)");
  REQUIRE(queue5->events_size() == 2);
  CHECK(EventName(*npu1, queue5->events(0)) == "relu");  // Sorted by start.
  CHECK(EventName(*npu1, queue5->events(1)) == "Memset");

  // Event stats.
  const XEvent& kernel = queue1->events(0);
  CHECK(EventName(*npu0, kernel) == "matmul");
  CHECK(FindStat(*npu0, kernel, xplane::kDeviceIdStat)->int64_value() == 0);
  CHECK(FindStat(*npu0, kernel, xplane::kStreamIdStat)->int64_value() == 1);
  CHECK(FindStat(*npu0, kernel, xplane::kCorrelationIdStat)->uint64_value() == 100);
  CHECK(FindStat(*npu0, kernel, xplane::kKernelDetailsStat)->str_value() ==
        "grid:4,1,1 block:128,1,1");
  CHECK(FindStat(*npu0, kernel, xplane::kFlopsStat)->int64_value() == 2048);
  CHECK(FindStat(*npu0, kernel, xplane::kTfOpStat)->str_value() == "MLP/fc1/addmm:Addmm");
  CHECK(FindStat(*npu0, kernel, xplane::kDeviceEventKindStat)->str_value() == "kernel");
  CHECK(FindStat(*npu0, kernel, "engine")->str_value() == "tensor");
  CHECK(FindStat(*npu0, kernel, "tiles")->int64_value() == 12);
  CHECK(FindStat(*npu0, kernel, xplane::kBytesStat) == nullptr);
  const XEvent& copy = queue2->events(0);
  CHECK(FindStat(*npu0, copy, xplane::kMemcpyDetailsStat)->str_value() == "kind:HtoD");
  CHECK(FindStat(*npu0, copy, xplane::kBytesStat)->int64_value() == 4096);
  CHECK(FindStat(*npu0, copy, xplane::kDeviceEventKindStat)->str_value() == "memcpy");
  CHECK(FindStat(*npu1, queue5->events(1), xplane::kMemsetDetailsStat) != nullptr);

  // Counted: 4 device events + 4 runtime calls; 2 out of the window + 3 lost.
  CHECK(result.stats.dropped == 5);
}

TEST_CASE("device times are mapped onto the host clock through the sync pairs") {
  auto script = std::make_shared<NpuScript>();
  Registration registration("clock_npu", script);
  REQUIRE(registration.status().ok());
  session::CaptureResult result = Capture(*script);
  const XSpace& space = result.space;
  std::map<std::string, std::pair<const XPlane*, int64_t>> starts;  // name -> epoch ns
  std::map<std::string, int64_t> durations;
  for (const char* plane_name : {"/device:CUSTOM:NPU:0", "/device:CUSTOM:NPU:1"}) {
    const XPlane* plane = xplane::FindPlane(space, plane_name);
    REQUIRE(plane != nullptr);
    for (const XLine& line : plane->lines()) {
      for (const XEvent& event : line.events()) {
        starts[EventName(*plane, event)] = {plane, EventStartEpochNs(space, line, event)};
        durations[EventName(*plane, event)] = event.duration_ps() / 1000;
      }
    }
  }
  REQUIRE(starts.size() == 4);
  for (size_t i = 0; i < script->launches.size(); ++i) {
    const auto [start, end] = script->DeviceSpan(i);
    CAPTURE(script->launches[i].name);
    REQUIRE(starts.count(script->launches[i].name) == 1);
    // Exact to rounding: the fit recovers offset and rate.
    CHECK(std::abs(starts[script->launches[i].name].second - start) <= 2);
    CHECK(std::abs(durations[script->launches[i].name] - (end - start)) <= 2);
  }
}

TEST_CASE("the fit: none is identity, one pair an offset, more a least-squares line") {
  using collectors::DeviceClockFit;
  CHECK(DeviceClockFit({}).ToHostEpochNs(1234) == 1234);
  DeviceClockFit offset({{1000, 1'700'000'000'000'000'500}});
  CHECK(offset.ToHostEpochNs(1000) == 1'700'000'000'000'000'500);
  CHECK(offset.ToHostEpochNs(3000) == 1'700'000'000'000'002'500);
  // host = 1.7e18 + 1.5 * device, with +-1 ns noise (+ - - +) that cancels.
  DeviceClockFit line({{0, 1'700'000'000'000'000'001},
                       {1000, 1'700'000'000'000'001'499},
                       {2000, 1'700'000'000'000'002'999},
                       {3000, 1'700'000'000'000'004'501}});
  CHECK(line.slope() == Approx(1.5).epsilon(1e-9));
  CHECK(std::llabs(line.ToHostEpochNs(10'000) - 1'700'000'000'000'015'000) <= 1);
  CHECK(line.warning().empty());
  // Pairs that cannot be a clock fall back to their mean offset, and say so.
  DeviceClockFit backwards({{0, 1000}, {1000, 0}});
  CHECK_FALSE(backwards.warning().empty());
  CHECK(backwards.slope() == 1.0);
  DeviceClockFit same({{10, 100}, {10, 110}});
  CHECK_FALSE(same.warning().empty());
  CHECK(same.ToHostEpochNs(10) == 105);
}

TEST_CASE("runtime calls get a runtime plane, one line per calling thread") {
  auto script = std::make_shared<NpuScript>();
  Registration registration("flow_npu", script);
  REQUIRE(registration.status().ok());
  session::CaptureResult result = Capture(*script);
  const XSpace& space = result.space;
  // xprof shows host planes named "/host:CPU..." only; exporters know
  // runtime planes by the "-runtime" suffix.
  const XPlane* runtime = xplane::FindPlane(space, "/host:CPU-NPU-runtime");
  REQUIRE(runtime != nullptr);
  REQUIRE(runtime->lines_size() == 1);
  const XLine& line = runtime->lines(0);
  CHECK(line.id() == ThisThreadId());
  // Named like the thread's line of markers.
  const XPlane* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  const XLine* host_line = FindLine(*host, ThisThreadId());
  REQUIRE(host_line != nullptr);
  CHECK(line.name() == host_line->name());
  // The host plane keeps only the markers.
  for (const XEvent& event : host_line->events()) {
    CHECK(EventName(*host, event) != "npuLaunchKernel");
  }
  std::map<uint64_t, int64_t> call_starts;
  int64_t previous = -1;
  for (const XEvent& event : line.events()) {
    CHECK(EventName(*runtime, event) == "npuLaunchKernel");
    CHECK(event.offset_ps() >= previous);
    previous = event.offset_ps();
    const XStat* id = FindStat(*runtime, event, xplane::kCorrelationIdStat);
    REQUIRE(id != nullptr);
    call_starts[id->uint64_value()] = EventStartEpochNs(space, line, event);
  }
  REQUIRE(call_starts.size() == 4);
  for (const Launch& launch : script->launches) {
    // Calls in host epoch time and in device time land on the same spot.
    CHECK(std::abs(call_starts[launch.correlation_id] - launch.call_start) <= 2);
  }

  // The Chrome trace draws one arrow per launch: "s" on the call, "f" on
  // the device event, with the correlation id as the flow id.
  const std::string json = testing::ChromeTraceText(space);
  size_t starts = 0, ends = 0;
  for (size_t at = 0; (at = json.find("{\"ph\":\"s\"", at)) != std::string::npos; ++at) ++starts;
  for (size_t at = 0; (at = json.find("{\"ph\":\"f\",\"bp\":\"e\"", at)) != std::string::npos; ++at)
    ++ends;
  CHECK(starts == 4);
  CHECK(ends == 4);
  for (const Launch& launch : script->launches) {
    CHECK(Contains(json, "\"id\":" + std::to_string(launch.correlation_id) + ","));
  }
}

TEST_CASE("drops are counted and explained in the warnings") {
  auto script = std::make_shared<NpuScript>();
  Registration registration("dropping_npu", script);
  REQUIRE(registration.status().ok());
  testing::TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  options.port = 0;
  options.host_name = "testhost";
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  script->Enqueue("matmul", 0, 1, DeviceEventKind::kKernel);
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->dropped_events == 5);
  std::string all;
  for (const std::string& warning : result->warnings) all += warning + "\n";
  CAPTURE(all);
  CHECK(Contains(all, "'dropping_npu' (NPU) lost 3 records: activity buffer overflow"));
  CHECK(Contains(all,
                 "dropped 2 records of device plug-in 'dropping_npu' (NPU): "
                 "outside the capture window"));
  // The saved file holds the same planes and warnings.
  XSpace saved = testing::ReadXSpace(result->run_dir + "/testhost.xplane.pb");
  CHECK(xplane::FindPlane(saved, "/device:CUSTOM:NPU:0") != nullptr);
  CHECK(AnyContains(saved.warnings(), "activity buffer overflow"));
}

TEST_CASE("a failing plug-in adds an error and the other planes stay") {
  auto failing = std::make_shared<NpuScript>();
  failing->flush_status = absl::UnavailableError("runtime lost the device");
  auto refusing = std::make_shared<NpuScript>();
  refusing->device_type = "ASIC";
  refusing->start_status = absl::PermissionDeniedError("no access to /dev/asic0");
  auto badly_named = std::make_shared<NpuScript>();
  badly_named->device_type = "my npu";
  auto healthy = std::make_shared<NpuScript>();
  healthy->device_type = "GPU";
  Registration r1("failing_npu", failing), r2("refusing_asic", refusing),
      r3("badly_named", badly_named), r4("healthy_gpu", healthy);
  session::CaptureResult result = Capture(*failing);
  const XSpace& space = result.space;
  CHECK(AnyContains(space.errors(), "device plug-in 'failing_npu'", "runtime lost the device"));
  CHECK(AnyContains(space.errors(), "device plug-in 'refusing_asic'", "no access to /dev/asic0"));
  CHECK(AnyContains(space.errors(), "device plug-in 'badly_named'",
                    "device_type() 'my npu' is not a plain name"));
  CHECK(space.errors_size() == 3);
  // A plug-in that did not start is never stopped or flushed.
  CHECK_FALSE(refusing->started);
  CHECK(refusing->flushes == 0);
  CHECK_FALSE(badly_named->started);
  // The host plane and the healthy plug-in's planes are all there; what the
  // failing one delivered before its error is kept.
  const XPlane* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  REQUIRE(host != nullptr);
  CHECK(host->lines_size() >= 1);
  CHECK(xplane::FindPlane(space, "/device:GPU:0") != nullptr);
  CHECK(xplane::FindPlane(space, "/device:GPU:0")->id() == 0);
  CHECK(xplane::FindPlane(space, "/device:CUSTOM:NPU:0") != nullptr);
  CHECK(xplane::FindPlane(space, "/device:CUSTOM:ASIC:0") == nullptr);
}

TEST_CASE("device_tracer_level 0 leaves plug-ins out") {
  auto script = std::make_shared<NpuScript>();
  Registration registration("quiet_npu", script);
  REQUIRE(registration.status().ok());
  session::CaptureResult result = Capture(*script, /*device_tracer_level=*/0);
  CHECK_FALSE(script->started);
  CHECK(script->flushes == 0);
  for (const XPlane& plane : result.space.planes()) {
    CHECK_FALSE(Contains(plane.name(), xplane::kDevicePlanePrefix));
  }
}

// A local capture through the public Profiler: the option reaches the
// session, so the plug-in runs at 1 (the default) and is not created at 0.
TEST_CASE("ProfilerOptions::device_tracer_level turns plug-ins on and off") {
  auto script = std::make_shared<NpuScript>();
  Registration registration("switched_npu", script);
  REQUIRE(registration.status().ok());
  testing::TempDir dir;
  auto capture = [&](int device_tracer_level) {
    ProfilerOptions options;
    options.logdir = dir.path();
    options.port = 0;
    options.host_name = "testhost";
    options.device_tracer_level = device_tracer_level;
    Profiler profiler(options);
    REQUIRE(profiler.status().ok());
    script->Enqueue("matmul", 0, 1, DeviceEventKind::kKernel);
    auto result = profiler.Stop();
    REQUIRE(result.ok());
    return testing::ReadXSpace(result->run_dir + "/testhost.xplane.pb");
  };
  CHECK(ProfilerOptions().device_tracer_level == 1);

  const XSpace off = capture(0);
  CHECK_FALSE(script->started);
  CHECK(script->flushes == 0);
  for (const XPlane& plane : off.planes()) {
    CHECK_FALSE(Contains(plane.name(), xplane::kDevicePlanePrefix));
  }
  CHECK(xplane::FindPlane(off, xplane::kHostPlaneName) != nullptr);

  const XSpace on = capture(1);
  CHECK(script->started);
  CHECK(script->flushes == 1);
  CHECK(xplane::FindPlane(on, "/device:CUSTOM:NPU:0") != nullptr);
}

TEST_CASE("device plug-in names follow the one plain-name rule of run and host names") {
  auto script = std::make_shared<NpuScript>();
  const std::vector<std::string> names = {"npu-v2.1", "my_npu", "my npu", ".",
                                          "..",       "a/b",    "",       std::string(256, 'n')};
  for (const std::string& name : names) {
    INFO(name);
    Registration registration(name, script);
    CHECK(registration.status().ok() == xplane::IsPlainName(name));
  }
  const absl::Status spaced = Registration("my npu", script).status();
  CHECK(absl::IsInvalidArgument(spaced));
  CHECK(spaced.message() ==
        "device collector name 'my npu' is not a plain name: use letters, digits, '.', '-' "
        "and '_' only (no spaces or path separators, not '.' or '..')");
  // The same words as a bad run name of the Profiler.
  CHECK(xplane::CheckPlainName("my npu", "run_name").message() ==
        "run_name 'my npu' is not a plain name: use letters, digits, '.', '-' "
        "and '_' only (no spaces or path separators, not '.' or '..')");
}

TEST_CASE("registration refuses duplicates and bad names") {
  auto script = std::make_shared<NpuScript>();
  Registration first("dup_npu", script);
  REQUIRE(first.status().ok());
  absl::Status again = RegisterDeviceCollector(
      "dup_npu", [script] { return std::make_unique<ScriptedNpu>(script); });
  CHECK(absl::IsAlreadyExists(again));
  CHECK(Contains(std::string(again.message()), "dup_npu"));
  CHECK(absl::IsInvalidArgument(RegisterDeviceCollector(
      "my npu", [script] { return std::make_unique<ScriptedNpu>(script); })));
  CHECK(absl::IsInvalidArgument(RegisterDeviceCollector("empty_factory", nullptr)));
  CHECK(absl::IsNotFound(UnregisterDeviceCollector("never_registered")));

  // Unregistered plug-ins are not created; the name can be taken again.
  REQUIRE(UnregisterDeviceCollector("dup_npu").ok());
  Capture(*script);
  CHECK_FALSE(script->started);
  REQUIRE(RegisterDeviceCollector("dup_npu", [script] {
            return std::make_unique<ScriptedNpu>(script);
          }).ok());
  Capture(*script);
  CHECK(script->started);
  CHECK(script->flushes == 1);  // One collector per name, not one per registration.
}

TEST_CASE("HostEpochNowNs reads the epoch clock the capture window uses") {
  collectors::CollectorOptions options;
  auto capture = session::CaptureSession::Start(options);
  REQUIRE(capture.ok());
  const int64_t inside = HostEpochNowNs();
  auto result = (*capture)->Stop();
  REQUIRE(result.ok());
  CHECK(result->start_epoch_ns <= inside);
  CHECK(inside <= result->stop_epoch_ns);
}

}  // namespace
}  // namespace neuronprof
