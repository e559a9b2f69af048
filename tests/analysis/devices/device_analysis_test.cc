// Device time per operator, the kernel table, peaks, roofline and the
// recommendations, on captures built like the device plug-in path writes
// them (tests/analysis/device_space.h); figures checked by hand arithmetic.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "src/analysis/devices/device_peaks.h"
#include "src/analysis/devices/kernel_table.h"
#include "src/analysis/ops/device_attribution.h"
#include "src/analysis/report/device_sections.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/xplane/xplane_builder.h"
#include "tests/analysis/device_space.h"

namespace neuronprof {
namespace analysis {
namespace {

using testing::DeviceSpaceBuilder;
constexpr int64_t kUs = DeviceSpaceBuilder::kPs;
// addmm M=64, N=128, K=784 in fp32: 2·M·N·K FLOPs, 4·(M·N + M·K + N·K) bytes.
constexpr int64_t kAddmmFlops = 2 * 64 * 128 * 784;
constexpr int64_t kAddmmBytes = 4 * (64 * 128 + 64 * 784 + 128 * 784);
// H100 SXM as collectors/cupti reports it: cc 9.0, 132 SMs, 1980 MHz.
constexpr double kH100Hz = 132 * 1980e6;

const OpTableRow* Row(const OpTable& table, const std::string& op) {
  for (const OpTableRow& row : table.rows) {
    if (row.op == op) return &row;
  }
  return nullptr;
}

bool Recommends(const Summary& summary, const std::string& id) {
  for (const Recommendation& r : summary.recommendations) {
    if (r.id == id) return true;
  }
  return false;
}

std::string EvidenceOf(const Summary& summary, const std::string& id) {
  for (const Recommendation& r : summary.recommendations) {
    if (r.id == id) return r.evidence;
  }
  return "";
}

TEST_CASE("device time goes to the innermost op around the launch, by correlation id") {
  DeviceSpaceBuilder b;
  b.Step(0, 1000, 0)
      .Op("aten::linear", 10, 130, "", "")
      .Addmm(20, 120, 64, 128, 784)
      .Op("aten::relu", 140, 160, "[[64,128]]", "Float")
      .Kernel("gemm", 30, 200, 50)          // launched inside addmm
      .Kernel("bias", 125, 260, 5)          // inside linear, after addmm
      .Kernel("relu_kernel", 150, 270, 10)  // inside relu
      .Kernel("orphan", 500, 600, 7);       // no op around its launch
  const auto space = b.Build();
  const Summary summary = Summarize(space);

  CHECK(summary.device.by_correlation == 3);
  CHECK(summary.device.unattributed == 1);
  const OpTableRow* addmm = Row(summary.table, "aten::addmm");
  REQUIRE(addmm != nullptr);
  CHECK(addmm->device_ps == 50 * kUs);
  CHECK(addmm->kernels == 1);
  CHECK(Row(summary.table, "aten::linear")->device_ps == 5 * kUs);
  CHECK(Row(summary.table, "aten::relu")->device_ps == 10 * kUs);
  CHECK(summary.table.total_device_ps == 65 * kUs);
  // FLOP/s against device time: 12845056 FLOPs in 50 us.
  CHECK(addmm->DeviceFlopsPerSecond() == Approx(kAddmmFlops / 50e-6));
  const std::string csv = FormatOpTableCsv(summary.table);
  CHECK(csv.find(",device_us,kernels,device_flops_per_s\n") != std::string::npos);
  CHECK(csv.find(",50.000,1,256901000000\n") != std::string::npos);
}

TEST_CASE(
    "a framework-op stat attributes device events without a launch; plug-ins keep their "
    "own correlation ids") {
  DeviceSpaceBuilder b;
  b.Addmm(20, 120, 64, 128, 784).Addmm(300, 400, 64, 128, 784).Kernel("gemm", 30, 130, 10);
  auto space = b.Build();
  xplane::XPlaneBuilder npu(xplane::FindOrAddPlane(&space, "/device:CUSTOM:NPU:0"));
  auto* queue = npu.AddLine(0, "Stream #0(Other)", 0);
  auto add = [&](int64_t start_us, std::string_view tf_op, int64_t correlation) {
    auto* e = npu.AddEvent(queue, npu.EventMetadataId("npu_matmul"), start_us * kUs, 5 * kUs);
    npu.AddStat(e, xplane::kTfOpStat, tf_op);
    // The GPU's launch 1 is not this plug-in's: types differ.
    if (correlation != 0) npu.AddStat(e, xplane::kCorrelationIdStat, correlation);
  };
  add(150, "aten::addmm", 1);  // after the first addmm started, before the second
  add(420, "aten::addmm", 0);
  add(430, "aten::nope", 0);
  const OperatorEvents ops = CollectOperatorEvents(space);
  const DeviceEvents device = CollectDeviceEvents(space, ops);

  REQUIRE(device.events.size() == 4);
  CHECK(device.by_correlation == 1);  // the GPU kernel
  CHECK(device.by_framework_op == 2);
  CHECK(device.unattributed == 1);
  std::vector<int64_t> starts;
  for (const DeviceOpEvent& e : device.events) {
    if (e.attribution == Attribution::kFrameworkOp) starts.push_back(ops.ops[e.op].start_ps);
  }
  CHECK(starts == std::vector<int64_t>{20 * kUs, 300 * kUs});
}

TEST_CASE("device work goes to the user marker around the middle of its launch call") {
  // The runtime read the call's start 400 ps before the marker's own start
  // (its ns clock against the marker's ps): the call's middle is inside.
  DeviceSpaceBuilder b;
  b.MarkerPs("decode", 10 * kUs + 400, 30 * kUs)
      .Kernel("inside", 10, 40, 5)
      .Kernel("after", 31, 50, 7);  // launched after the marker ended
  const auto space = b.Build();
  const Summary summary = Summarize(space);
  CHECK(summary.device.to_marker == 1);
  CHECK(summary.device.to_neither == 1);
  REQUIRE(summary.device.events.size() == 2);
  CHECK(summary.device.events[0].marker_name == "decode");
  CHECK(summary.device.events[1].marker < 0);
  const std::vector<SpanStats>& markers = summary.markers.markers;
  REQUIRE(!markers.empty());
  CHECK(markers[0].name == "decode");
  CHECK(markers[0].device_ps == 5 * kUs);
  CHECK(markers[0].device_events == 1);
  // Runtime calls are not user markers.
  for (const SpanStats& row : markers) CHECK(row.name != "cudaLaunchKernel");
}

TEST_CASE("kernel table: per name and launch, tensor-core flag, copies with bandwidth") {
  DeviceSpaceBuilder b;
  const std::string details =
      "regs:64 static_shared:0 dynamic_shared:4096 grid:80,1,1 "
      "block:128,1,1 occ_pct:50";
  b.Kernel("volta_h884gemm_64x64_nn", 0, 100, 10, details)
      .Kernel("volta_h884gemm_64x64_nn", 0, 120, 40, details)
      .Kernel("elementwise_kernel", 0, 200, 10)
      .Achieved(50)
      .Kernel("elementwise_kernel", 0, 220, 30)
      .Achieved(100)
      .Copy("MemcpyHtoD", 0, 300, 100, 1 << 20)
      .Copy("Memset", 0, 500, 4, -1);
  const auto space = b.Build();
  const Summary summary = Summarize(space);
  const KernelTable& table = summary.kernels;

  REQUIRE(table.kernels.size() == 2);
  const KernelRow& gemm = table.kernels[0];  // 50 us, the longest
  CHECK(gemm.name == "volta_h884gemm_64x64_nn");
  CHECK(gemm.calls == 2);
  CHECK(gemm.total_ps == 50 * kUs);
  CHECK(gemm.MeanPs() == 25 * kUs);
  CHECK(gemm.min_ps == 10 * kUs);
  CHECK(gemm.max_ps == 40 * kUs);
  CHECK(*gemm.launch.grid == std::array<int64_t, 3>{80, 1, 1});
  CHECK(*gemm.launch.block == std::array<int64_t, 3>{128, 1, 1});
  CHECK(*gemm.launch.registers_per_thread == 64);
  CHECK(*gemm.launch.shared_memory == 4096);
  CHECK(*gemm.launch.occupancy_pct == Approx(50));
  CHECK(gemm.tensor_cores);
  const KernelRow& elementwise = table.kernels[1];
  CHECK_FALSE(elementwise.tensor_cores);
  // Weighted by time: (50·10 + 100·30) / 40.
  CHECK(*elementwise.achieved_occupancy_pct == Approx(87.5));
  CHECK(table.tensor_core_ps == 50 * kUs);

  REQUIRE(table.transfers.size() == 2);
  CHECK(table.transfers[0].name == "MemcpyHtoD");
  CHECK(table.transfers[0].bytes == 1 << 20);
  CHECK(table.transfers[0].BytesPerSecond() == Approx((1 << 20) / 100e-6));
  CHECK(table.transfers[1].unknown_bytes_calls == 1);
  CHECK(table.transfers[1].BytesPerSecond() == 0);

  const std::string csv = FormatKernelCsv(table);
  CHECK(csv.find("kernel,volta_h884gemm_64x64_nn,2,50.000,25.000,10.000,40.000,\"80,1,1\","
                 "\"128,1,1\",64,4096,50,,1,,\n") != std::string::npos);
  CHECK(csv.find("memcpy,MemcpyHtoD,1,100.000,,,,,,,,,,,1048576,10485800000\n") !=
        std::string::npos);
}

TEST_CASE("tensor cores are recognised by kernel name") {
  for (const char* name : {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                           "cutlass_80_tensorop_s1688gemm_128x128_32x3_nn_align4",
                           "ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_nn", "volta_h884cudnn",
                           "sm90_gemm_wgmma_kernel", "turing_HMMA_gemm"}) {
    CHECK(UsesTensorCores(name));
  }
  for (const char* name :
       {"ampere_sgemm_128x64_nn", "void at::native::vectorized_elementwise_kernel", "Memcpy"}) {
    CHECK_FALSE(UsesTensorCores(name));
  }
}

TEST_CASE("peaks: the cc table scaled by the plane's SMs and clock, reference parts, plug-ins") {
  DeviceSpaceBuilder h100;
  h100.GpuProperties(9, 0, 132, 1980000, 3350000000000).Kernel("k", 0, 0, 1);
  const auto space = h100.Build();
  const Summary summary = Summarize(space);
  const DevicePeak& peak = summary.peaks.planes.begin()->second;
  REQUIRE(peak.known);
  CHECK(peak.device == "/device:GPU:0 (cc 9.0)");
  CHECK(peak.tensor_cores);
  CHECK(peak.fp32_flops == Approx(256 * kH100Hz));   // 66.9 TFLOP/s
  CHECK(peak.fp16_flops == Approx(4096 * kH100Hz));  // 1070 TFLOP/s
  CHECK(peak.FlopsFor(DType::kBFloat16) == peak.fp16_flops);
  CHECK(peak.FlopsFor(DType::kDouble) == Approx(128 * kH100Hz));
  CHECK(peak.bytes_per_s == Approx(3.35e12));

  // No SMs, clock or bandwidth: the reference A100 SXM4 40GB (312 TFLOP/s).
  DeviceSpaceBuilder a100;
  a100.GpuProperties(8, 0, 0, 0, 0).Kernel("k", 0, 0, 1);
  const auto a100_space = a100.Build();
  const DevicePeak a100_peak = Summarize(a100_space).peaks.planes.begin()->second;
  CHECK(a100_peak.fp16_flops == Approx(2048 * 108 * 1410e6));
  CHECK(a100_peak.bytes_per_s == Approx(1555e9));
  CHECK(a100_peak.source == "cc table, reference A100 SXM4 40GB");

  DeviceSpaceBuilder unknown;
  unknown.GpuProperties(12, 1, 0, 0, 0).Kernel("k", 0, 0, 1);
  const auto unknown_space = unknown.Build();
  const Summary unknown_summary = Summarize(unknown_space);
  CHECK_FALSE(unknown_summary.peaks.planes.begin()->second.known);
  fmt::memory_buffer out;
  AppendRoofline(unknown_summary.roofline, unknown_summary.table, unknown_summary.peaks, 20, out);
  CHECK(fmt::to_string(out).find("no peak known for /device:GPU:0 (cc 12.1)") != std::string::npos);

  // A plug-in that reports its peaks with TSL's stat names.
  tensorflow::profiler::XSpace npu_space;
  xplane::XPlaneBuilder npu(xplane::FindOrAddPlane(&npu_space, "/device:CUSTOM:NPU:0"));
  npu.AddPlaneStat("name", std::string_view("FakeNPU v1"));
  npu.AddPlaneStat(xplane::kPeakTeraflopsStat, std::string_view("197.5"));
  npu.AddPlaneStat(xplane::kPeakHbmBandwidthStat, int64_t{820});
  const xplane::PlaneVisitor plane(npu_space.planes(0));
  const DevicePeak npu_peak = PlanePeak(plane);
  CHECK(npu_peak.known);
  CHECK(npu_peak.device == "/device:CUSTOM:NPU:0 FakeNPU v1");
  CHECK(npu_peak.FlopsFor(DType::kHalf) == Approx(197.5e12));
  CHECK(npu_peak.bytes_per_s == Approx(820e9));
}

TEST_CASE("roofline and MFU against the device's peak") {
  DeviceSpaceBuilder b;
  // 2 TB/s: addmm's 20.2 FLOP/byte reach 40.5 TFLOP/s, below fp32's 66.9.
  b.GpuProperties(9, 0, 132, 1980000, 2000000000000)
      .Step(0, 1000, 0)
      .Addmm(20, 120, 64, 128, 784)
      .Kernel("ampere_sgemm_64x64_nn", 30, 200, 50);
  const auto space = b.Build();
  const Summary summary = Summarize(space);
  REQUIRE(summary.roofline.ops.size() == 1);
  const RooflinePoint& point = summary.roofline.ops[0];
  const double intensity = static_cast<double>(kAddmmFlops) / kAddmmBytes;
  CHECK(point.intensity == Approx(intensity));
  CHECK(point.bound_known);
  CHECK(point.memory_bound);
  CHECK(point.attainable == Approx(intensity * 2e12));
  CHECK(point.achieved == Approx(kAddmmFlops / 50e-6));
  CHECK(point.Efficiency() == Approx(kAddmmFlops / 50e-6 / (intensity * 2e12)));

  // MFU: the GPU's FLOPs over the 1 ms step at the fp32 peak.
  REQUIRE(summary.roofline.devices.size() == 2);
  CHECK(summary.roofline.devices[0].plane == -1);  // the CPU, no peak given
  const DeviceRoofline& gpu = summary.roofline.devices[1];
  CHECK(gpu.flops == kAddmmFlops);
  CHECK(gpu.mfu == Approx(kAddmmFlops / (1e-3 * 256 * kH100Hz)));
}

// One addmm of `device_us` on the GPU, inside a 1 ms step whose host time
// the op covers from 20 to 920 us.
tensorflow::profiler::XSpace GemmOnGpu(int64_t n, const char* dtype, int64_t device_ps,
                                       bool peak_known = true) {
  DeviceSpaceBuilder b;
  if (peak_known) b.GpuProperties(9, 0, 132, 1980000, 3350000000000);
  b.Step(0, 1000, 0)
      .Addmm(20, 920, 64, n, 784, dtype)
      .KernelPs("gemm_kernel", 30, 950 * kUs, device_ps);
  return b.Build();
}

TEST_CASE("recommendation: launch-bound device") {
  // 60 kernels of 2 us: spaced 10 us apart the device idles 80 % between them.
  DeviceSpaceBuilder spaced, packed;
  for (int i = 0; i < 60; ++i) {
    spaced.Kernel("tiny", 0, 100 + 10 * i, 2);
    packed.Kernel("tiny", 0, 100 + 2 * i, 2);
  }
  const auto spaced_space = spaced.Build();
  const Summary launch_bound = Summarize(spaced_space);
  CHECK(Recommends(launch_bound, "launch_bound"));
  CHECK(EvidenceOf(launch_bound, "launch_bound") ==
        "/device:GPU:0: 60 kernels, median 2.000 us, device idle 80% of the time between its "
        "first and last event");
  const auto packed_space = packed.Build();
  CHECK_FALSE(Recommends(Summarize(packed_space), "launch_bound"));
}

TEST_CASE("recommendation: host-bound device") {
  // The op covers 90 % of the step; the device works 40 us of it.
  const auto idle_device = GemmOnGpu(128, "Float", 40 * kUs);
  const Summary host_bound = Summarize(idle_device);
  CHECK(Recommends(host_bound, "host_bound"));
  CHECK(EvidenceOf(host_bound, "host_bound") ==
        "over 1 steps the device was busy 4.0% of the step time while the host ran ops or "
        "markers 90% of it");
  DeviceSpaceBuilder busy;
  busy.Step(0, 1000, 0).Addmm(20, 920, 64, 128, 784).Kernel("gemm_kernel", 30, 100, 800);
  const auto busy_space = busy.Build();
  CHECK_FALSE(Recommends(Summarize(busy_space), "host_bound"));
}

TEST_CASE("recommendation: a dominant op far below its roofline") {
  // 12.8 MFLOP in 40 us: 0.3 TFLOP/s of an attainable 66.9.
  const auto slow = GemmOnGpu(128, "Float", 40 * kUs);
  const Summary low = Summarize(slow);
  CHECK(Recommends(low, "low_roofline"));
  CHECK(EvidenceOf(low, "low_roofline")
            .find("aten::addmm (M=64,N=128,K=784,Float) takes 100% "
                  "of the op time on /device:GPU:0 (cc 9.0) at "
                  "321.13GFLOP/s, 0.5% of the attainable "
                  "66.91TFLOP/s (compute-bound") == 0);
  // 0.3 us: 42.8 TFLOP/s, 64 % of the roof.
  const auto fast = GemmOnGpu(128, "Float", 300000);
  CHECK_FALSE(Recommends(Summarize(fast), "low_roofline"));
  // No peak known: no roofline to compare with.
  const auto no_peak = GemmOnGpu(128, "Float", 40 * kUs, false);
  CHECK_FALSE(Recommends(Summarize(no_peak), "low_roofline"));
}

TEST_CASE("recommendation: GEMM dims that are not multiples of 8") {
  const auto odd = GemmOnGpu(100, "Half", 40 * kUs);
  const Summary padded = Summarize(odd);
  CHECK(Recommends(padded, "tensor_core_dims"));
  CHECK(EvidenceOf(padded, "tensor_core_dims") ==
        "not a multiple of 8: aten::addmm (M=64,N=100,K=784,Half): N=100");
  const auto even = GemmOnGpu(128, "Half", 40 * kUs);
  CHECK_FALSE(Recommends(Summarize(even), "tensor_core_dims"));
  // fp32 on the CPU: no tensor cores to feed.
  DeviceSpaceBuilder cpu;
  cpu.Addmm(0, 100, 64, 100, 784);
  const auto cpu_space = cpu.Build();
  CHECK_FALSE(Recommends(Summarize(cpu_space), "tensor_core_dims"));
}

TEST_CASE("recommendation: fp32 GEMMs on a GPU with tensor cores") {
  const auto fp32 = GemmOnGpu(128, "Float", 40 * kUs);
  CHECK(Recommends(Summarize(fp32), "fp32_gemm"));
  const auto bf16 = GemmOnGpu(128, "BFloat16", 40 * kUs);
  CHECK_FALSE(Recommends(Summarize(bf16), "fp32_gemm"));
  // Unknown GPU: whether it has tensor cores is unknown too.
  const auto unknown = GemmOnGpu(128, "Float", 40 * kUs, false);
  CHECK_FALSE(Recommends(Summarize(unknown), "fp32_gemm"));
}

TEST_CASE("recommendation: CPU BLAS far below the given peak") {
  // 12845056 FLOPs in 100 us: 128.5 GFLOP/s.
  DeviceSpaceBuilder b;
  b.Addmm(0, 100, 64, 128, 784);
  const auto space = b.Build();
  PeakOptions fast_cpu;
  fast_cpu.cpu_peak_gflops = 1000;
  const Summary slow = Summarize(space, fast_cpu);
  CHECK(Recommends(slow, "cpu_blas_slow"));
  CHECK(EvidenceOf(slow, "cpu_blas_slow") ==
        "aten::addmm ran at 128.45GFLOP/s, 13% of the given peak 1.00TFLOP/s");
  PeakOptions modest_cpu;
  modest_cpu.cpu_peak_gflops = 200;
  CHECK_FALSE(Recommends(Summarize(space, modest_cpu), "cpu_blas_slow"));
  CHECK_FALSE(Recommends(Summarize(space), "cpu_blas_slow"));  // no peak given
}

TEST_CASE("the text summary prints device columns, kernels, utilisation and recommendations") {
  const auto space = GemmOnGpu(100, "Float", 40 * kUs);
  const std::string text = FormatSummaryText(Summarize(space), 20);
  for (const char* expected :
       {"Device(us)", "Kernels: 1 distinct", "gemm_kernel", "MFU", "Recommendations:\n",
        "[fp32_gemm]", "evidence: fp32 GEMMs/convolutions take 100%"}) {
    CHECK(text.find(expected) != std::string::npos);
  }
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
