// Captures with host operators, runtime launches and device planes, laid out
// as the device plug-in path writes them (collectors/device/device_planes):
// ops on "/host:CPU" thread 100, launches on "/host:CPU-GPU-runtime" thread
// 100, kernels and copies on "/device:GPU:0" stream 7 sharing the launch's
// correlation_id. Times are microseconds from the capture start.
#ifndef NEURONPROF_TESTS_ANALYSIS_DEVICE_SPACE_H_
#define NEURONPROF_TESTS_ANALYSIS_DEVICE_SPACE_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

class DeviceSpaceBuilder {
 public:
  static constexpr int64_t kPs = 1000000;  // per microsecond
  static constexpr int64_t kThread = 100;

  DeviceSpaceBuilder()
      : host_(xplane::FindOrAddPlane(&space_, xplane::kHostPlaneName)),
        main_(host_.AddLine(kThread, "main", 0)) {}

  // An operator with recorded inputs ("[[64,784],[784,128]]", "Float,Float").
  DeviceSpaceBuilder& Op(std::string_view name, int64_t start_us, int64_t end_us,
                         std::string_view dims, std::string_view types) {
    auto* e = HostEvent(name, start_us, end_us);
    host_.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
    host_.AddStat(e, xplane::kOpDirectionStat, std::string_view("fprop"));
    if (!dims.empty()) {
      host_.AddStat(e, xplane::kOpInputDimsStat, dims);
      host_.AddStat(e, xplane::kOpInputTypesStat, types);
    }
    return *this;
  }
  // addmm(bias[N], x[M,K], w[K,N]) in `dtype`.
  DeviceSpaceBuilder& Addmm(int64_t start_us, int64_t end_us, int64_t m, int64_t n, int64_t k,
                            std::string_view dtype = "Float") {
    const std::string d(dtype);
    return Op("aten::addmm", start_us, end_us,
              "[[" + std::to_string(n) + "],[" + std::to_string(m) + "," + std::to_string(k) +
                  "],[" + std::to_string(k) + "," + std::to_string(n) + "]]",
              d + "," + d + "," + d);
  }
  DeviceSpaceBuilder& Step(int64_t start_us, int64_t end_us, int64_t number) {
    auto* e = HostEvent("train", start_us, end_us);
    host_.AddStat(e, xplane::kRootLevelStat, int64_t{1});
    host_.AddStat(e, xplane::kStepNumStat, number);
    return *this;
  }

  // A user marker (no stats), in picoseconds.
  DeviceSpaceBuilder& MarkerPs(std::string_view name, int64_t start_ps, int64_t end_ps) {
    host_.AddEvent(main_, host_.EventMetadataId(name), start_ps, end_ps - start_ps);
    return *this;
  }

  // A 1 us launch call at `launch_us` and the kernel it queued.
  DeviceSpaceBuilder& Kernel(std::string_view name, int64_t launch_us, int64_t start_us,
                             int64_t duration_us, std::string_view details = "") {
    const int64_t id = Launch("cudaLaunchKernel", launch_us);
    auto* e = DeviceEvent(name, start_us, duration_us, "kernel");
    gpu().AddStat(e, xplane::kCorrelationIdStat, id);
    if (!details.empty()) gpu().AddStat(e, xplane::kKernelDetailsStat, details);
    return *this;
  }
  // A kernel in picoseconds, launched at `launch_us` (short kernels).
  DeviceSpaceBuilder& KernelPs(std::string_view name, int64_t launch_us, int64_t start_ps,
                               int64_t duration_ps) {
    const int64_t id = Launch("cudaLaunchKernel", launch_us);
    auto* e = gpu().AddEvent(stream(), gpu().EventMetadataId(name), start_ps, duration_ps);
    gpu().AddStat(e, xplane::kDeviceEventKindStat, std::string_view("kernel"));
    gpu().AddStat(e, xplane::kCorrelationIdStat, id);
    return *this;
  }
  DeviceSpaceBuilder& Copy(std::string_view name, int64_t launch_us, int64_t start_us,
                           int64_t duration_us, int64_t bytes) {
    const bool set = name.rfind("Memset", 0) == 0;
    const int64_t id = Launch(set ? "cudaMemsetAsync" : "cudaMemcpyAsync", launch_us);
    auto* e = DeviceEvent(name, start_us, duration_us, set ? "memset" : "memcpy");
    gpu().AddStat(e, xplane::kCorrelationIdStat, id);
    if (bytes >= 0) gpu().AddStat(e, xplane::kBytesStat, bytes);
    return *this;
  }
  // The last device event's estimated achieved occupancy.
  DeviceSpaceBuilder& Achieved(double pct) {
    auto* e = stream()->mutable_events()->Mutable(stream()->events_size() - 1);
    gpu().AddStat(e, xplane::kEstAchievedOccupancyStat, pct);
    return *this;
  }
  // The plane stats collectors/cupti writes.
  DeviceSpaceBuilder& GpuProperties(int64_t major, int64_t minor, int64_t sms, int64_t clock_khz,
                                    int64_t bandwidth_bytes_per_s) {
    gpu().AddPlaneStat("compute_cap_major", major);
    gpu().AddPlaneStat("compute_cap_minor", minor);
    if (sms > 0) gpu().AddPlaneStat(xplane::kCoreCountStat, sms);
    if (clock_khz > 0) gpu().AddPlaneStat(xplane::kClockRateStat, clock_khz);
    if (bandwidth_bytes_per_s > 0) {
      gpu().AddPlaneStat(xplane::kMemoryBandwidthStat, bandwidth_bytes_per_s);
    }
    return *this;
  }

  tensorflow::profiler::XSpace Build() {
    // Parents before children on equal starts (as the host collector writes).
    std::stable_sort(main_->mutable_events()->begin(), main_->mutable_events()->end(),
                     [](const auto& a, const auto& b) {
                       if (a.offset_ps() != b.offset_ps()) return a.offset_ps() < b.offset_ps();
                       return a.duration_ps() > b.duration_ps();
                     });
    return space_;
  }

 private:
  tensorflow::profiler::XEvent* HostEvent(std::string_view name, int64_t start_us, int64_t end_us) {
    return host_.AddEvent(main_, host_.EventMetadataId(name), start_us * kPs,
                          (end_us - start_us) * kPs);
  }
  int64_t Launch(std::string_view call, int64_t launch_us) {
    if (!runtime_) {
      runtime_.emplace(xplane::FindOrAddPlane(&space_, "/host:CPU-GPU-runtime"));
      runtime_line_ = runtime_->AddLine(kThread, "main", 0);
    }
    auto* e =
        runtime_->AddEvent(runtime_line_, runtime_->EventMetadataId(call), launch_us * kPs, kPs);
    runtime_->AddStat(e, xplane::kCorrelationIdStat, ++correlation_);
    return correlation_;
  }
  xplane::XPlaneBuilder& gpu() {
    if (!gpu_) {
      gpu_.emplace(xplane::FindOrAddPlane(&space_, "/device:GPU:0"));
      stream_ = gpu_->AddLine(7, "Stream #7(Kernel,Memcpy)", 0);
    }
    return *gpu_;
  }
  tensorflow::profiler::XLine* stream() {
    gpu();
    return stream_;
  }
  tensorflow::profiler::XEvent* DeviceEvent(std::string_view name, int64_t start_us,
                                            int64_t duration_us, std::string_view kind) {
    auto* e =
        gpu().AddEvent(stream(), gpu().EventMetadataId(name), start_us * kPs, duration_us * kPs);
    gpu().AddStat(e, xplane::kDeviceEventKindStat, kind);
    return e;
  }

  tensorflow::profiler::XSpace space_;
  xplane::XPlaneBuilder host_;
  tensorflow::profiler::XLine* main_;
  std::optional<xplane::XPlaneBuilder> runtime_, gpu_;
  tensorflow::profiler::XLine* runtime_line_ = nullptr;
  tensorflow::profiler::XLine* stream_ = nullptr;
  int64_t correlation_ = 0;
};

// The GPU capture the summary CLI test reads (write_operator_xplane --gpu):
// an H100 (cc 9.0) running one fp32 addmm with an odd N, its 40 us kernel,
// a 1 MiB copy and 60 short, spaced kernels, in one 1 ms step.
inline tensorflow::profiler::XSpace MakeGpuCapture() {
  DeviceSpaceBuilder b;
  b.GpuProperties(9, 0, 132, 1980000, 3350000000000)
      .Step(0, 1000, 0)
      .Addmm(20, 920, 64, 100, 784)
      .Kernel("ampere_sgemm_64x64_nn", 30, 100, 40,
              "regs:128 static_shared:0 dynamic_shared:16384 grid:2,1,1 block:128,1,1 "
              "occ_pct:25")
      .Copy("MemcpyHtoD", 25, 50, 100, 1 << 20);
  for (int i = 0; i < 60; ++i) b.Kernel("vectorized_elementwise_kernel", 900, 200 + 10 * i, 2);
  return b.Build();
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_ANALYSIS_DEVICE_SPACE_H_
