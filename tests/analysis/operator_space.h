// A synthetic capture with operator events, built the way collectors/torch
// writes them: one training step per millisecond with a forward pass in
// MLP/layer:fc1, a backward node, an optimizer step and a device plane.
// Times below are microseconds from the step start.
#ifndef NEURONPROF_TESTS_ANALYSIS_OPERATOR_SPACE_H_
#define NEURONPROF_TESTS_ANALYSIS_OPERATOR_SPACE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

struct OpSpec {
  const char* name;
  int64_t start_us, end_us;
  const char* direction;  // nullptr: no direction stat
  int64_t seq;            // -1: none
  const char* dims;       // nullptr: no shapes recorded
  const char* types;
  const char* values;
};

// addmm: M=64, N=128, K=784; backward mm: 64x128 @ 128x784, 128x64 @ 64x784.
// addmm ends 1 us before its linear: xprof drops a child op that ends at
// the same picosecond as its parent (tests/interop/NOTES.md).
inline constexpr OpSpec kStepOps[] = {
    {"aten::linear", 30, 130, "fprop", 10, "[[64,784],[128,784],[128]]", "Float,Float,Float",
     R"(["","",""])"},
    {"aten::t", 30, 40, "fprop", -1, "[[128,784]]", "Float", R"([""])"},
    {"aten::addmm", 40, 129, "fprop", -1, "[[128],[64,784],[784,128],[],[]]",
     "Float,Float,Float,Scalar,Scalar", R"(["","","","1","1"])"},
    {"aten::relu", 130, 160, "fprop", 11, "[[64,128]]", "Float", R"([""])"},
    {"aten::foo_unknown", 200, 250, "fprop", 12, "[[64,128]]", "Float", R"([""])"},
    {"AddmmBackward0", 410, 700, "bprop", 10, "[[64,128]]", "Float", R"([""])"},
    {"aten::mm", 420, 500, "bprop", -1, "[[64,128],[128,784]]", "Float,Float", R"(["",""])"},
    {"aten::mm", 500, 600, "bprop", -1, "[[128,64],[64,784]]", "Float,Float", R"(["",""])"},
    {"aten::add_", 810, 850, "optimizer", -1, "[[128,784],[128,784],[]]", "Float,Float,Scalar",
     R"(["","","-0.01"])"},
    {"aten::zero_", 860, 870, nullptr, -1, "[[128,784]]", "Float", R"([""])"},
};

struct MarkerSpec {
  const char* name;
  int64_t start_us, end_us;
};
inline constexpr MarkerSpec kStepMarkers[] = {{"MLP", 10, 400},
                                              {"layer:fc1", 20, 200},
                                              {"loss_backward", 400, 800},
                                              {"optimizer_step", 800, 900}};

inline constexpr int64_t kStepUs = 1000;

// `steps` steps on the "main" line; a "data_loader" line with a marker;
// with `device`, a "/device:GPU:0" plane with one kernel (40..100 us) and
// one memcpy (450..470 us) per step.
inline tensorflow::profiler::XSpace MakeOperatorSpace(int steps, bool device) {
  using xplane::XPlaneBuilder;
  tensorflow::profiler::XSpace space;
  XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* main_line = host.AddLine(1, "main", 0);
  auto* loader = host.AddLine(2, "data_loader", 0);
  constexpr int64_t kPs = 1000000;
  for (int s = 0; s < steps; ++s) {
    const int64_t base = s * kStepUs;
    auto* step = host.AddEvent(main_line, host.EventMetadataId("train"), base * kPs, kStepUs * kPs);
    host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(step, xplane::kStepNumStat, int64_t{s});
    for (const MarkerSpec& m : kStepMarkers) {
      host.AddEvent(main_line, host.EventMetadataId(m.name), (base + m.start_us) * kPs,
                    (m.end_us - m.start_us) * kPs);
    }
    for (const OpSpec& op : kStepOps) {
      auto* e = host.AddEvent(main_line, host.EventMetadataId(op.name), (base + op.start_us) * kPs,
                              (op.end_us - op.start_us) * kPs);
      host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
      if (op.direction) host.AddStat(e, xplane::kOpDirectionStat, std::string_view(op.direction));
      if (op.seq >= 0) host.AddStat(e, xplane::kOpSequenceStat, op.seq);
      if (op.dims) {
        host.AddStat(e, xplane::kOpInputDimsStat, std::string_view(op.dims));
        host.AddStat(e, xplane::kOpInputTypesStat, std::string_view(op.types));
        host.AddStat(e, xplane::kOpInputValuesStat, std::string_view(op.values));
      }
    }
    host.AddEvent(loader, host.EventMetadataId("load"), (base + 100) * kPs, 300 * kPs);
  }
  // Parents before children on equal starts (xprof does not sort).
  for (auto* line : {main_line, loader}) {
    std::stable_sort(line->mutable_events()->begin(), line->mutable_events()->end(),
                     [](const auto& a, const auto& b) {
                       if (a.offset_ps() != b.offset_ps()) return a.offset_ps() < b.offset_ps();
                       return a.duration_ps() > b.duration_ps();
                     });
  }
  if (device) {
    XPlaneBuilder gpu(xplane::FindOrAddPlane(&space, "/device:GPU:0"));
    auto* stream = gpu.AddLine(7, "Stream #7", 0);
    for (int s = 0; s < steps; ++s) {
      const int64_t base = s * kStepUs;
      auto* k =
          gpu.AddEvent(stream, gpu.EventMetadataId("gemm_kernel"), (base + 40) * kPs, 60 * kPs);
      gpu.AddStat(k, xplane::kDeviceEventKindStat, std::string_view("kernel"));
      auto* m =
          gpu.AddEvent(stream, gpu.EventMetadataId("MemcpyHtoD"), (base + 450) * kPs, 20 * kPs);
      gpu.AddStat(m, xplane::kDeviceEventKindStat, std::string_view("memcpy"));
    }
  }
  xplane::SetProfileTimes(&space, 1'700'000'000'000'000'000,
                          1'700'000'000'000'000'000 + steps * kStepUs * 1000);
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_ANALYSIS_OPERATOR_SPACE_H_
