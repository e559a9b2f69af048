// The CUPTI collector without a GPU: activity records built in memory are
// translated into DeviceEvents / RuntimeCalls, the buffer pool hands out and
// takes back buffers, and Start() without a driver fails cleanly. The
// no-driver tests name a driver library that does not exist, so the same
// assertions run on every machine; the driver-present path is the hidden
// test "[.gpu]", run on GPU machines with `cupti_translation_test "[gpu]"`.
#include <cupti_activity.h>
#include <cupti_callbacks.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "neuronprof/cupti.h"
#include "neuronprof/device.h"
#include "neuronprof/neuronprof.h"
#include "src/analysis/report/summary.h"
#include "src/collectors/cupti/activity_translator.h"
#include "src/collectors/cupti/buffer_pool.h"
#include "src/collectors/cupti/cupti_collector.h"
#include "src/collectors/cupti/driver_properties.h"
#include "src/collectors/cupti/gpu_properties.h"
#include "src/collectors/device/device_activity.h"
#include "src/collectors/device/device_planes.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/collectors/cupti/cupti_test_gpu.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace cupti {
namespace {

using testing::AsActivity;
using testing::H100;

// Copies everything the collector reports, as the real sink does.
class RecordingSink : public DeviceActivitySink {
 public:
  struct Event {
    DeviceEventKind kind;
    int device_id;
    int64_t queue_id;
    std::string name;
    uint64_t start_ns, end_ns, correlation_id;
    int64_t bytes;
    std::string details;
    std::map<std::string, double> stats;
  };
  struct Call {
    int64_t thread_id;
    std::string name;
    uint64_t start_ns, end_ns, correlation_id;
    bool host_epoch_clock;
  };

  void AddClockSync(uint64_t device_ns, int64_t host_ns) override {
    clock_syncs.emplace_back(device_ns, host_ns);
  }
  void AddEvent(const DeviceEvent& e) override {
    Event copy{e.kind,   e.device_id,      e.queue_id, std::string(e.name),    e.start_ns,
               e.end_ns, e.correlation_id, e.bytes,    std::string(e.details), {}};
    for (size_t i = 0; i < e.num_stats; ++i) {
      copy.stats[std::string(e.stats[i].key())] = e.stats[i].double_value();
    }
    events.push_back(std::move(copy));
  }
  void AddRuntimeCall(const RuntimeCall& c) override {
    calls.push_back({c.thread_id, std::string(c.name), c.start_ns, c.end_ns, c.correlation_id,
                     c.host_epoch_clock});
  }
  void AddDropped(uint64_t count, std::string_view reason) override {
    drops.emplace_back(count, std::string(reason));
  }
  void SetDeviceProperty(int device_id, std::string_view key, std::string_view value) override {
    string_properties[{device_id, std::string(key)}] = std::string(value);
  }
  void SetDeviceProperty(int device_id, std::string_view key, int64_t value) override {
    int_properties[{device_id, std::string(key)}] = value;
  }
  void AddMemoryEvent(const DeviceMemoryEvent& event) override {
    memory.push_back(event);
    memory_pools.emplace_back(event.pool);  // The view dies with the call.
  }

  std::vector<std::pair<uint64_t, int64_t>> clock_syncs;
  std::vector<Event> events;
  std::vector<Call> calls;
  std::vector<std::pair<uint64_t, std::string>> drops;
  std::map<std::pair<int, std::string>, std::string> string_properties;
  std::map<std::pair<int, std::string>, int64_t> int_properties;
  std::vector<DeviceMemoryEvent> memory;
  std::vector<std::string> memory_pools;
};

KernelRecord MakeKernel() {
  KernelRecord kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  kernel.name = "_Z6vecAddPKfS0_Pfi";
  kernel.deviceId = 0;
  kernel.streamId = 7;
  kernel.correlationId = 42;
  kernel.start = 1'000'000'000'100;
  kernel.end = 1'000'000'002'600;
  kernel.gridX = 264;
  kernel.gridY = 1;
  kernel.gridZ = 1;
  kernel.blockX = 256;
  kernel.blockY = 1;
  kernel.blockZ = 1;
  kernel.registersPerThread = 32;
  kernel.staticSharedMemory = 0;
  kernel.dynamicSharedMemory = 1024;
  return kernel;
}

TEST_CASE("a kernel record becomes a kernel event with xprof's kernel_details") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus = {{0, H100()}};
  ActivityTranslator translator(sink, gpus);
  translator.Translate(AsActivity(MakeKernel()));
  translator.Finish();

  REQUIRE(sink.events.size() == 1);
  const RecordingSink::Event& e = sink.events[0];
  CHECK(e.kind == DeviceEventKind::kKernel);
  CHECK(e.name == "vecAdd(float const*, float const*, float*, int)");
  CHECK(e.device_id == 0);
  CHECK(e.queue_id == 7);
  CHECK(e.correlation_id == 42);
  CHECK(e.start_ns == 1'000'000'000'100);
  CHECK(e.end_ns == 1'000'000'002'600);
  CHECK(e.bytes == -1);
  // 256 threads x 32 registers: 8 resident blocks fill the SM's 2048 threads.
  CHECK(e.details ==
        "regs:32 static_shared:0 dynamic_shared:1024 grid:264,1,1 "
        "block:256,1,1 occ_pct:100");
  CHECK(e.stats.at("theoretical_occupancy_pct") == Approx(100.0));
  // 264 blocks over 132 SMs: 2 per SM, so at most 2 x 256 of 2048 threads.
  CHECK(e.stats.at("blocks_per_sm") == Approx(2.0));
  CHECK(e.stats.at("est_achieved_occupancy_pct") == Approx(25.0));
  CHECK(sink.drops.empty());
  CHECK(translator.devices_seen() == std::set<int>{0});
}

TEST_CASE("kernels on a GPU without known limits carry no occupancy") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus;  // Driver not readable.
  ActivityTranslator translator(sink, gpus);
  KernelRecord kernel = MakeKernel();
  kernel.name = "plain_c_kernel";  // Not a mangled name: kept as is.
  translator.Translate(AsActivity(kernel));
  REQUIRE(sink.events.size() == 1);
  CHECK(sink.events[0].name == "plain_c_kernel");
  CHECK(sink.events[0].details ==
        "regs:32 static_shared:0 dynamic_shared:1024 grid:264,1,1 "
        "block:256,1,1 occ_pct:0");
  CHECK(sink.events[0].stats.empty());
}

TEST_CASE("occupancy follows the limiting resource") {
  const GpuProperties gpu = H100();
  KernelLaunch launch;
  launch.grid_x = 1000;
  launch.block_x = 1024;

  SECTION("registers: 64 per thread leave room for one 1024-thread block") {
    launch.registers_per_thread = 64;
    auto occupancy = ComputeOccupancy(gpu, launch);
    REQUIRE(occupancy.has_value());
    CHECK(occupancy->active_blocks_per_sm == 1);
    CHECK(occupancy->theoretical_pct == Approx(50.0));
  }
  SECTION("shared memory: 100 KiB per block (opted in) fits twice per SM") {
    launch.block_x = 128;
    launch.registers_per_thread = 16;
    launch.dynamic_shared_memory = 100 << 10;
    auto occupancy = ComputeOccupancy(gpu, launch);
    REQUIRE(occupancy.has_value());
    CHECK(occupancy->active_blocks_per_sm == 2);
    CHECK(occupancy->theoretical_pct == Approx(12.5));
  }
  SECTION("a block larger than the device allows has no occupancy") {
    launch.block_x = 2048;
    CHECK_FALSE(ComputeOccupancy(gpu, launch).has_value());
  }
  SECTION("a GPU with an unknown limit has no occupancy") {
    GpuProperties partial = gpu;
    partial.regs_per_sm = 0;
    CHECK_FALSE(ComputeOccupancy(partial, launch).has_value());
  }
}

TEST_CASE("memcpy records become copies named as xprof classifies them") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus;
  ActivityTranslator translator(sink, gpus);

  MemcpyRecord h2d{};
  h2d.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  h2d.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  h2d.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  h2d.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  h2d.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  h2d.bytes = 4096;
  h2d.start = 500;
  h2d.end = 900;
  h2d.deviceId = 1;
  h2d.streamId = 13;
  h2d.correlationId = 77;
  translator.Translate(AsActivity(h2d));

  MemcpyRecord d2h = h2d;
  d2h.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  d2h.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  d2h.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  d2h.flags = 0;
  d2h.bytes = 8;
  translator.Translate(AsActivity(d2h));

  PeerMemcpyRecord p2p{};
  p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p2p.srcKind = p2p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p2p.bytes = 1 << 20;
  p2p.start = 1000;
  p2p.end = 2000;
  p2p.deviceId = 0;
  p2p.srcDeviceId = 0;
  p2p.dstDeviceId = 3;
  p2p.streamId = 2;
  p2p.correlationId = 78;
  translator.Translate(AsActivity(p2p));

  REQUIRE(sink.events.size() == 3);
  const auto& a = sink.events[0];
  CHECK(a.kind == DeviceEventKind::kMemcpy);
  CHECK(a.name == "MemcpyHtoD");
  CHECK(a.bytes == 4096);
  CHECK(a.device_id == 1);
  CHECK(a.queue_id == 13);
  CHECK(a.correlation_id == 77);
  CHECK(a.start_ns == 500);
  CHECK(a.end_ns == 900);
  CHECK(a.details == "kind:HtoD kind_src:pinned kind_dst:device size:4096 dest:1 async:1");
  CHECK(sink.events[1].name == "MemcpyDtoH");
  CHECK(sink.events[1].details ==
        "kind:DtoH kind_src:device kind_dst:pageable size:8 dest:1 async:0");
  CHECK(sink.events[2].name == "MemcpyPtoP");
  CHECK(sink.events[2].bytes == 1 << 20);
  CHECK(sink.events[2].details ==
        "kind:PtoP kind_src:device kind_dst:device size:1048576 dest:3 async:0");
}

TEST_CASE("memset records become Memset events with their size") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus;
  ActivityTranslator translator(sink, gpus);
  MemsetRecord memset{};
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset.bytes = 65536;
  memset.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  memset.flags = CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC;
  memset.start = 10;
  memset.end = 30;
  memset.deviceId = 2;
  memset.streamId = 5;
  memset.correlationId = 9;
  translator.Translate(AsActivity(memset));
  REQUIRE(sink.events.size() == 1);
  const auto& e = sink.events[0];
  CHECK(e.kind == DeviceEventKind::kMemset);
  CHECK(e.name == "Memset");
  CHECK(e.bytes == 65536);
  CHECK(e.device_id == 2);
  CHECK(e.queue_id == 5);
  CHECK(e.correlation_id == 9);
  CHECK(e.details == "kind:device num_bytes:65536 async:1");
}

TEST_CASE("memory records become allocations and frees of the memory kind's pool") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus;
  ActivityTranslator translator(sink, gpus);
  MemoryRecord memory{};
  memory.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  memory.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  memory.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  memory.address = 0x7f0000001000;
  memory.bytes = 1 << 20;
  memory.timestamp = 500;
  memory.deviceId = 1;
  translator.Translate(AsActivity(memory));
  memory.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  memory.timestamp = 900;
  translator.Translate(AsActivity(memory));
  memory.timestamp = 0;  // No time: dropped with a reason.
  translator.Translate(AsActivity(memory));
  translator.Finish();
  REQUIRE(sink.memory.size() == 2);
  CHECK(sink.memory[0].kind == DeviceMemoryEvent::Kind::kAllocation);
  CHECK(sink.memory[1].kind == DeviceMemoryEvent::Kind::kFree);
  CHECK(sink.memory_pools[0] == "device");
  CHECK(sink.memory[0].device_id == 1);
  CHECK(sink.memory[0].address == 0x7f0000001000);
  CHECK(sink.memory[0].bytes == 1 << 20);
  CHECK(sink.memory[0].time_ns == 500);
  CHECK_FALSE(sink.memory[0].host_epoch_clock);  // CUPTI's clock, like kernels.
  REQUIRE(sink.drops.size() == 1);
  CHECK(sink.drops[0].first == 1);
  CHECK(translator.devices_seen() == std::set<int>{1});
}

TEST_CASE("runtime and driver API records become named runtime calls") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus;
  ActivityTranslator translator(sink, gpus);

  ApiRecord launch{};
  launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  launch.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  launch.start = 100;
  launch.end = 180;
  launch.threadId = 4321;
  launch.correlationId = 42;
  translator.Translate(AsActivity(launch));

  ApiRecord copy = launch;
  copy.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
  copy.correlationId = 43;
  translator.Translate(AsActivity(copy));

  ApiRecord driver = launch;
  driver.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  driver.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  driver.correlationId = 44;
  translator.Translate(AsActivity(driver));

  ApiRecord unknown = launch;
  unknown.cbid = 0x7ffffff0;  // Not a callback id CUPTI knows.
  translator.Translate(AsActivity(unknown));

  REQUIRE(sink.calls.size() == 4);
  CHECK(sink.calls[0].name == "cudaLaunchKernel");
  CHECK(sink.calls[0].thread_id == 4321);
  CHECK(sink.calls[0].start_ns == 100);
  CHECK(sink.calls[0].end_ns == 180);
  CHECK(sink.calls[0].correlation_id == 42);
  CHECK_FALSE(sink.calls[0].host_epoch_clock);  // CUPTI's clock, like kernels.
  CHECK(sink.calls[1].name == "cudaMemcpyAsync");
  CHECK(sink.calls[2].name == "cuLaunchKernel");
  CHECK(sink.calls[3].name == "cuda_runtime_" + std::to_string(0x7ffffff0));
  CHECK(sink.events.empty());
}

TEST_CASE("records without usable times and unknown kinds are reported as drops") {
  RecordingSink sink;
  const std::map<int, GpuProperties> gpus;
  ActivityTranslator translator(sink, gpus);
  KernelRecord unfinished = MakeKernel();
  unfinished.start = 0;
  unfinished.end = 0;
  translator.Translate(AsActivity(unfinished));
  KernelRecord backwards = MakeKernel();
  backwards.end = backwards.start - 1;
  translator.Translate(AsActivity(backwards));
  CUpti_Activity marker{};
  marker.kind = CUPTI_ACTIVITY_KIND_MARKER;
  translator.Translate(marker);
  translator.Translate(AsActivity(MakeKernel()));
  translator.Finish();

  CHECK(sink.events.size() == 1);
  REQUIRE(sink.drops.size() == 2);
  CHECK(sink.drops[0].first == 2);
  CHECK_THAT(sink.drops[0].second, Catch::Contains("start/end"));
  CHECK(sink.drops[1].first == 1);
  CHECK_THAT(sink.drops[1].second, Catch::Contains("kinds"));
}

TEST_CASE("the buffer pool hands each buffer out once and refuses when empty") {
  auto pool = ActivityBufferPool::Create(1024, 3);
  REQUIRE(pool.ok());
  ActivityBufferPool& p = **pool;
  uint8_t* a = p.Acquire();
  uint8_t* b = p.Acquire();
  uint8_t* c = p.Acquire();
  REQUIRE(a != nullptr);
  REQUIRE(b != nullptr);
  REQUIRE(c != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(a) % ActivityBufferPool::kAlignment == 0);
  CHECK(b - a == 1024);
  CHECK(p.Acquire() == nullptr);
  CHECK(p.Acquire() == nullptr);
  CHECK(p.refused() == 2);
  CHECK(p.Outstanding() == 3);

  a[0] = 1;  // Buffers are writable memory.
  CHECK(p.Complete(c, 100));
  CHECK(p.Complete(a, 24));
  CHECK_FALSE(p.Complete(a, 24));  // Returned twice.
  uint8_t stack_byte = 0;
  CHECK_FALSE(p.Complete(&stack_byte, 1));  // Not from this pool.
  CHECK_FALSE(p.Complete(a + 8, 1));        // Not a buffer start.
  CHECK(p.Outstanding() == 1);
  // Each refused return is counted: its records are lost, and the capture
  // says so (an earlier capture's buffer, seen on an H200).
  CHECK(p.rejected() == 3);

  std::vector<std::pair<uint8_t*, size_t>> seen;
  p.ForEachCompleted([&](uint8_t* data, size_t valid) { seen.emplace_back(data, valid); });
  // Hand-out order; b is still out.
  CHECK(seen == std::vector<std::pair<uint8_t*, size_t>>{{a, 24}, {c, 100}});

  CHECK(p.Complete(b, 0));
  p.Reset();
  CHECK(p.Outstanding() == 0);
  CHECK(p.refused() == 0);
  CHECK(p.rejected() == 0);
  CHECK(p.Acquire() == a);
}

TEST_CASE("the buffer pool rejects unusable shapes") {
  CHECK(ActivityBufferPool::Create(1001, 2).status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(ActivityBufferPool::Create(1024, 0).status().code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("CUPTI options out of range are InvalidArgument naming the field") {
  CuptiOptions options;
  CHECK(ValidateCuptiOptions(options).ok());
  options.buffer_bytes = 1000;
  absl::Status status = ValidateCuptiOptions(options);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("buffer_bytes"));
  options = CuptiOptions();
  options.max_buffers = 0;
  status = ValidateCuptiOptions(options);
  CHECK(status.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(status.message()), Catch::Contains("max_buffers"));
}

// A driver library no machine has: the collector takes its no-driver path.
constexpr char kMissingDriver[] = "libneuronprof_test_no_such_driver.so.1";

TEST_CASE("Start without an NVIDIA driver fails clearly and enables nothing") {
  CuptiCollector collector{CuptiOptions(), kMissingDriver};
  CHECK(collector.device_type() == "GPU");
  const absl::Status status = collector.Start();
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()), Catch::Contains(kMissingDriver));
  CHECK_THAT(std::string(status.message()), Catch::Contains("NVIDIA driver"));
  CHECK_FALSE(CuptiTracer::Get().active());
  CHECK(CuptiTracer::Get().enabled_kinds().empty());
  // The same answer again: a failed start leaves no half-started state.
  CHECK(collector.Start().code() == absl::StatusCode::kFailedPrecondition);
  CHECK(collector.Stop().code() == absl::StatusCode::kFailedPrecondition);
  RecordingSink sink;
  CHECK(collector.Flush(sink).ok());
  CHECK(sink.events.empty());
  CHECK(sink.clock_syncs.empty());
}

// Hidden: needs an NVIDIA driver (and fails without one, rather than
// passing vacuously). Run with: cupti_translation_test "[gpu]".
TEST_CASE("Start with an NVIDIA driver enables CUPTI and Stop disables it", "[.gpu]") {
  const absl::Status driver = CheckDriverPresent();
  INFO(driver.ToString());
  REQUIRE(driver.ok());
  CuptiCollector collector{CuptiOptions()};
  const absl::Status started = collector.Start();
  INFO(started.ToString());
  REQUIRE(started.ok());
  CHECK(CuptiTracer::Get().active());
  CHECK_FALSE(CuptiTracer::Get().enabled_kinds().empty());
  CHECK(collector.Stop().ok());
  CHECK_FALSE(CuptiTracer::Get().active());
  CHECK(CuptiTracer::Get().enabled_kinds().empty());
  RecordingSink sink;
  CHECK(collector.Flush(sink).ok());
  CHECK(sink.clock_syncs.size() == 2);
}

using testing::EventName;
using testing::PlaneStatText;
using testing::StatText;

TEST_CASE("translated records land on xprof's GPU planes, lines and stats") {
  // Window [start, start + 1 s]; CUPTI's clock runs 5 us ahead of the host.
  const int64_t start = 1'700'000'000'000'000'000;
  constexpr int64_t kSkew = 5000;
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, start, start + 1'000'000'000);

  collectors::DeviceActivityBuffer buffer;
  buffer.AddClockSync(start + kSkew, start);
  buffer.AddClockSync(start + kSkew + 900'000'000, start + 900'000'000);
  const std::map<int, GpuProperties> gpus = {{0, H100()}};
  ActivityTranslator translator(buffer, gpus);
  KernelRecord kernel = MakeKernel();
  kernel.start = start + kSkew + 1000;
  kernel.end = start + kSkew + 3500;
  translator.Translate(AsActivity(kernel));
  MemcpyRecord copy{};
  copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  copy.bytes = 4096;
  copy.start = start + kSkew + 200;
  copy.end = start + kSkew + 700;
  copy.streamId = 7;
  copy.correlationId = 41;
  translator.Translate(AsActivity(copy));
  ApiRecord launch{};
  launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  launch.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  launch.start = start + kSkew + 500;
  launch.end = start + kSkew + 900;
  launch.threadId = 4321;
  launch.correlationId = 42;
  translator.Translate(AsActivity(launch));
  translator.Finish();
  ReportGpuProperties(0, gpus.at(0), buffer);

  collectors::CollectStats stats;
  collectors::AddDeviceActivity("cupti", "GPU", buffer.activity(), &space, &stats);
  CHECK(stats.dropped == 0);

  const auto* gpu = xplane::FindPlane(space, "/device:GPU:0");
  REQUIRE(gpu != nullptr);
  CHECK(PlaneStatText(*gpu, "gpu_device_name") == "NVIDIA H100 80GB HBM3");
  CHECK(PlaneStatText(*gpu, "core_count") == "132");
  CHECK(PlaneStatText(*gpu, "compute_cap_major") == "9");
  CHECK(PlaneStatText(*gpu, "compute_cap_minor") == "0");
  CHECK(PlaneStatText(*gpu, "memory_bandwidth") ==
        std::to_string(int64_t{2} * 2619000 * 1000 * 5120 / 8));
  CHECK(PlaneStatText(*gpu, "device_vendor") == "Nvidia");
  REQUIRE(gpu->lines_size() == 1);
  const auto& line = gpu->lines(0);
  CHECK(line.id() == 7);
  CHECK(line.name() == "Stream #7(Kernel,Memcpy)");
  REQUIRE(line.events_size() == 2);
  // Sorted by start; times on the host clock, relative to the window.
  const auto& memcpy_event = line.events(0);
  const auto& kernel_event = line.events(1);
  CHECK(EventName(*gpu, memcpy_event) == "MemcpyHtoD");
  CHECK(line.timestamp_ns() + memcpy_event.offset_ps() / 1000 == 200);
  CHECK(StatText(*gpu, memcpy_event, "memcpy_details") ==
        "kind:HtoD kind_src:pinned kind_dst:device size:4096 dest:0 async:0");
  CHECK(StatText(*gpu, memcpy_event, "bytes") == "4096");
  CHECK(EventName(*gpu, kernel_event) == "vecAdd(float const*, float const*, float*, int)");
  CHECK(line.timestamp_ns() + kernel_event.offset_ps() / 1000 == 1000);
  CHECK(kernel_event.duration_ps() == 2'500'000);
  CHECK(StatText(*gpu, kernel_event, "kernel_details") ==
        "regs:32 static_shared:0 dynamic_shared:1024 grid:264,1,1 "
        "block:256,1,1 occ_pct:100");
  CHECK(StatText(*gpu, kernel_event, "correlation_id") == "42");
  CHECK(StatText(*gpu, kernel_event, "theoretical_occupancy_pct") == "100");

  // The launch is on thread 4321's line of the GPU runtime plane, with the
  // kernel's correlation id.
  const auto* host = xplane::FindPlane(space, collectors::RuntimePlaneName("GPU"));
  REQUIRE(host != nullptr);
  const tensorflow::profiler::XLine* thread = nullptr;
  for (const auto& candidate : host->lines()) {
    if (candidate.id() == 4321) thread = &candidate;
  }
  REQUIRE(thread != nullptr);
  REQUIRE(thread->events_size() == 1);
  const auto& call = thread->events(0);
  CHECK(EventName(*host, call) == "cudaLaunchKernel");
  CHECK(thread->timestamp_ns() + call.offset_ps() / 1000 == 500);
  CHECK(StatText(*host, call, "correlation_id") == "42");
}

TEST_CASE("a CUPTI kernel's time goes to the user marker around its launch") {
  // A marker-only program: "decode_batch" on thread 4321 calls
  // cudaLaunchKernel; CUPTI reports the call and the kernel with one
  // correlation id. The summary gives the kernel's time to the marker.
  const int64_t start = 1'700'000'000'000'000'000;
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, start, start + 1'000'000'000);
  auto* host_plane = space.add_planes();
  host_plane->set_name(xplane::kHostPlaneName);
  xplane::XPlaneBuilder host(host_plane);
  auto* line = host.AddLine(4321, "worker", 0);
  host.AddEvent(line, host.EventMetadataId("decode_batch"), 400'000, 1'000'000);

  collectors::DeviceActivityBuffer buffer;
  buffer.AddClockSync(start, start);
  const std::map<int, GpuProperties> gpus = {{0, H100()}};
  ActivityTranslator translator(buffer, gpus);
  KernelRecord kernel = MakeKernel();
  kernel.start = start + 1000;
  kernel.end = start + 3500;
  translator.Translate(AsActivity(kernel));
  ApiRecord launch{};
  launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  launch.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  launch.start = start + 500;
  launch.end = start + 900;
  launch.threadId = 4321;
  launch.correlationId = kernel.correlationId;
  translator.Translate(AsActivity(launch));
  translator.Finish();
  collectors::CollectStats stats;
  collectors::AddDeviceActivity("cupti", "GPU", buffer.activity(), &space, &stats);

  const analysis::Summary summary = analysis::Summarize(space);
  REQUIRE(summary.device.events.size() == 1);
  CHECK(summary.device.events[0].marker_name == "decode_batch");
  CHECK(summary.device.to_marker == 1);
  const analysis::SpanStats* row = nullptr;
  for (const analysis::SpanStats& marker : summary.markers.markers) {
    if (marker.name == "decode_batch") row = &marker;
  }
  REQUIRE(row != nullptr);
  CHECK(row->device_ps == 2'500'000);
  CHECK(row->device_events == 1);
}

TEST_CASE("EnableCuptiCollector registers once and keeps its first options") {
  CuptiOptions bad;
  bad.max_buffers = 5000;
  CHECK(EnableCuptiCollector(bad).code() == absl::StatusCode::kInvalidArgument);
  CuptiOptions options;
  options.max_buffers = 8;
  REQUIRE(EnableCuptiCollector(options).ok());
  CHECK(EnableCuptiCollector(options).ok());  // Idempotent.
  CuptiOptions other = options;
  other.driver_api = false;
  const absl::Status status = EnableCuptiCollector(other);
  CHECK(status.code() == absl::StatusCode::kFailedPrecondition);
  CHECK_THAT(std::string(status.message()), Catch::Contains("already enabled"));
  // The name is taken, as for any plug-in.
  CHECK(RegisterDeviceCollector("cupti", [] {
          return std::unique_ptr<DeviceCollector>();
        }).code() == absl::StatusCode::kAlreadyExists);
}

TEST_CASE("a capture with the CUPTI collector keeps its host plane without a GPU") {
  // The collector EnableCuptiCollector registers, through the same plug-in
  // registry, pointed at a missing driver.
  REQUIRE(RegisterDeviceCollector("cupti_without_driver", [] {
            return std::make_unique<CuptiCollector>(CuptiOptions{size_t{4} << 20, 8, true},
                                                    kMissingDriver);
          }).ok());
  testing::TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  options.port = 0;
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  std::string xplane_path;
  {
    Profiler profiler(options);
    REQUIRE(profiler.status().ok());
    { ScopedTrace step("train_step"); }
    absl::StatusOr<ProfileResult> result = profiler.Stop();
    REQUIRE(result.ok());
    for (const std::string& file : result->files) {
      if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") {
        xplane_path = file;
      }
    }
  }
  REQUIRE(UnregisterDeviceCollector("cupti_without_driver").ok());
  REQUIRE_FALSE(xplane_path.empty());
  const tensorflow::profiler::XSpace space = testing::ReadXSpace(xplane_path);
  bool host_marker = false;
  if (const auto* host = xplane::FindPlane(space, xplane::kHostPlaneName)) {
    xplane::PlaneVisitor(*host).ForEachEvent(
        [&](const xplane::EventVisitor& event) { host_marker |= event.Name() == "train_step"; });
  }
  CHECK(host_marker);
  std::string errors;
  for (const std::string& error : space.errors()) {
    if (error.find("'cupti_without_driver'") != std::string::npos) errors += error;
  }
  CHECK_THAT(errors, Catch::Contains(kMissingDriver));
  CHECK_THAT(errors, Catch::Contains("NVIDIA driver"));
  CHECK_FALSE(CuptiTracer::Get().active());
}

}  // namespace
}  // namespace cupti
}  // namespace neuronprof
