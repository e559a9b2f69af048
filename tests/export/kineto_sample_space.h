// A training-like XSpace for the Kineto export tests: steps on the main
// thread with torch operators, a backward thread, CUDA runtime launches and
// the kernels, copies and sets they queue on GPU 0. Built with the names
// the collectors use (src/xplane/schema.h); times are relative to the capture
// start (kStartEpochNs).
#ifndef NEURONPROF_TESTS_EXPORT_KINETO_SAMPLE_SPACE_H_
#define NEURONPROF_TESTS_EXPORT_KINETO_SAMPLE_SPACE_H_

#include <cstdint>
#include <string>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

inline constexpr int64_t kStartEpochNs = 1700000000000000000;
inline constexpr int64_t kWindowNs = 12'000'000;  // 12 ms
inline constexpr int64_t kMainTid = 1001;
inline constexpr int64_t kBackwardTid = 1002;
inline constexpr int64_t kStream = 7;
inline constexpr int kSampleSteps = 3;
inline constexpr int64_t kStepNs = 3'000'000;  // steps at 1, 4, 7 ms
inline constexpr int64_t kFirstStepNs = 1'000'000;

class SampleSpaceBuilder {
 public:
  explicit SampleSpaceBuilder(tensorflow::profiler::XSpace* space)
      : space_(space),
        host_(xplane::FindOrAddPlane(space, xplane::kHostPlaneName)),
        runtime_(xplane::FindOrAddPlane(space, xplane::kCuptiPlaneName)),
        gpu_(xplane::FindOrAddPlane(space, "/device:GPU:0")) {
    main_ = host_.AddLine(kMainTid, "MainThread", 0);
    backward_ = host_.AddLine(kBackwardTid, "autograd_thread", 0);
    main_runtime_ = runtime_.AddLine(kMainTid, "MainThread", 0);
    backward_runtime_ = runtime_.AddLine(kBackwardTid, "autograd_thread", 0);
    stream_ = gpu_.AddLine(kStream, "Stream #7", 0);
    gpu_.AddPlaneStat("name", std::string_view("NVIDIA H100 80GB HBM3"));
    gpu_.AddPlaneStat("compute_capability", std::string_view("9.0"));
    gpu_.AddPlaneStat("memory_bytes", int64_t{85899345920});
    gpu_.AddPlaneStat("core_count", int64_t{132});
  }

  xplane::XEvent* Host(xplane::XLine* line, std::string_view name, int64_t start_ns,
                       int64_t end_ns) {
    return host_.AddEvent(line, host_.EventMetadataId(name), start_ns * 1000,
                          (end_ns - start_ns) * 1000);
  }

  xplane::XEvent* Op(xplane::XLine* line, std::string_view name, int64_t start_ns, int64_t end_ns,
                     int64_t seq, std::string_view dims, std::string_view types) {
    xplane::XEvent* op = Host(line, name, start_ns, end_ns);
    host_.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
    host_.AddStat(op, xplane::kOpSequenceStat, seq);
    host_.AddStat(op, xplane::kOpDirectionStat,
                  std::string_view(line == backward_ ? "bprop" : "fprop"));
    if (line == backward_) {
      host_.AddStat(op, xplane::kOpForwardThreadStat, static_cast<uint64_t>(kMainTid));
    }
    host_.AddStat(op, xplane::kOpInputDimsStat, dims);
    host_.AddStat(op, xplane::kOpInputTypesStat, types);
    return op;
  }

  // A runtime call on `line`'s thread and, when `kind` is set, the device
  // event it queued (correlated).
  void Launch(xplane::XLine* runtime_line, std::string_view call, int64_t call_ns,
              std::string_view kind, std::string_view device_name, int64_t device_start_ns,
              int64_t device_end_ns, std::string_view details = {}, int64_t bytes = -1) {
    const int64_t correlation = next_correlation_++;
    xplane::XEvent* launch =
        runtime_.AddEvent(runtime_line, runtime_.EventMetadataId(call), call_ns * 1000, 10'000'000);
    runtime_.AddStat(launch, xplane::kCorrelationIdStat, correlation);
    if (kind.empty()) return;
    xplane::XEvent* work =
        gpu_.AddEvent(stream_, gpu_.EventMetadataId(device_name), device_start_ns * 1000,
                      (device_end_ns - device_start_ns) * 1000);
    gpu_.AddStat(work, xplane::kDeviceIdStat, int64_t{0});
    gpu_.AddStat(work, xplane::kStreamIdStat, kStream);
    gpu_.AddStat(work, xplane::kCorrelationIdStat, correlation);
    gpu_.AddStat(work, xplane::kDeviceEventKindStat, kind);
    if (kind == "kernel") gpu_.AddStat(work, xplane::kKernelDetailsStat, details);
    if (kind == "memcpy") gpu_.AddStat(work, xplane::kMemcpyDetailsStat, details);
    if (kind == "memset") gpu_.AddStat(work, xplane::kMemsetDetailsStat, details);
    if (bytes >= 0) gpu_.AddStat(work, xplane::kBytesStat, bytes);
  }

  // One training step: forward ops (addmm, relu), a host-to-device copy, a
  // memset, then AddmmBackward0 on the backward thread and a stream sync
  // inside the step's "optimizer_step" marker (no operator around it).
  void Step(int step) {
    const int64_t t = kFirstStepNs + step * kStepNs;
    const int64_t us = 1000;
    xplane::XEvent* marker = Host(main_, "train", t, t + kStepNs - 100 * us);
    host_.AddStat(marker, xplane::kStepNumStat, int64_t{step});
    host_.AddStat(marker, xplane::kRootLevelStat, int64_t{1});
    Op(main_, "aten::addmm", t + 200 * us, t + 700 * us, 100 + step, "[[128],[64,784],[784,128]]",
       "Float,Float,Float");
    Launch(main_runtime_, "cudaLaunchKernel", t + 300 * us, "kernel", "ampere_sgemm_128x64_nn",
           t + 400 * us, t + 900 * us,
           "grid:4,2,1 block:128,1,1 registers:64 shared_memory:16384 occ_pct:50.0");
    Op(main_, "aten::relu", t + 800 * us, t + 1000 * us, 200 + step, "[[64,128]]", "Float");
    Launch(main_runtime_, "cudaLaunchKernel", t + 850 * us, "kernel",
           "vectorized_elementwise_kernel", t + 950 * us, t + 1050 * us,
           "regs:16 static_shared:0 dynamic_shared:512 grid:64,1,1 block:256,1,1");
    Op(main_, "aten::copy_", t + 1100 * us, t + 1300 * us, -1, "[[64,784],[64,784]]",
       "Float,Float");
    Launch(main_runtime_, "cudaMemcpyAsync", t + 1150 * us, "memcpy", "Memcpy HtoD", t + 1200 * us,
           t + 1350 * us, "kind:HtoD", 200704);
    Op(main_, "aten::zero_", t + 1400 * us, t + 1480 * us, -1, "[[128]]", "Float");
    Launch(main_runtime_, "cudaMemsetAsync", t + 1420 * us, "memset", "Memset (Device)",
           t + 1450 * us, t + 1470 * us, "", 512);
    Op(backward_, "AddmmBackward0", t + 1500 * us, t + 2000 * us, 100 + step, "[[64,128]]",
       "Float");
    Launch(backward_runtime_, "cudaLaunchKernel", t + 1600 * us, "kernel", "ampere_sgemm_64x64_tn",
           t + 1700 * us, t + 2100 * us,
           "grid:2,2,1 block:128,1,1 registers:72 shared_memory:8192 occ_pct:25.0");
    Host(main_, "optimizer_step", t + 2200 * us, t + 2800 * us);
    Launch(main_runtime_, "cudaStreamSynchronize", t + 2300 * us, "", "", 0, 0);
  }

  void Finish() {
    xplane::SetProfileTimes(space_, kStartEpochNs, kStartEpochNs + kWindowNs);
    space_->add_hostnames("testhost");
  }

  xplane::XPlaneBuilder& host() { return host_; }
  xplane::XLine* main_line() { return main_; }

 private:
  tensorflow::profiler::XSpace* space_;
  xplane::XPlaneBuilder host_, runtime_, gpu_;
  xplane::XLine* main_ = nullptr;
  xplane::XLine* backward_ = nullptr;
  xplane::XLine* main_runtime_ = nullptr;
  xplane::XLine* backward_runtime_ = nullptr;
  xplane::XLine* stream_ = nullptr;
  int64_t next_correlation_ = 5000;
};

// The whole sample: kSampleSteps steps.
inline tensorflow::profiler::XSpace KinetoSampleSpace() {
  tensorflow::profiler::XSpace space;
  SampleSpaceBuilder builder(&space);
  for (int step = 0; step < kSampleSteps; ++step) builder.Step(step);
  builder.Finish();
  return space;
}

// `steps` steps (7 host spans each: 6 on the main thread, 1 on the
// backward one), then a step marker without a number ("eval") on the main
// thread: past 8192 spans a thread's spans are written in chunks, each on a
// thread of its own.
inline constexpr int64_t kEvalNs(int steps) { return kFirstStepNs + steps * kStepNs; }
inline tensorflow::profiler::XSpace ManyStepsSpace(int steps) {
  tensorflow::profiler::XSpace space;
  SampleSpaceBuilder builder(&space);
  for (int step = 0; step < steps; ++step) builder.Step(step);
  xplane::XEvent* eval =
      builder.Host(builder.main_line(), "eval", kEvalNs(steps), kEvalNs(steps) + 1000);
  builder.host().AddStat(eval, xplane::kRootLevelStat, int64_t{1});
  builder.Finish();
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_KINETO_SAMPLE_SPACE_H_
