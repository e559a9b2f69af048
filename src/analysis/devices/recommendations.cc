#include "src/analysis/devices/recommendations.h"

#include <algorithm>
#include <map>
#include <utility>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "src/analysis/text/text_table.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

// Launch-bound: at least this many kernels, half of them shorter than
// kShortKernelPs, and the device idle for this share of the span between
// its first and last event (PyTorch's profiler plugin calls kernels under
// 10 us "small").
constexpr int64_t kLaunchBoundMinKernels = 50;
constexpr int64_t kShortKernelPs = 10'000'000;
constexpr double kLaunchBoundIdle = 0.3;
// Host-bound: over the steps, the device busy less than this share of the
// time while host ops or markers ran at least kHostBusy of it.
constexpr double kHostBoundDeviceBusy = 0.5;
constexpr double kHostBusy = 0.7;
// Low roofline: the longest op takes this share of its device's op time
// and reaches less than kLowEfficiency of its attainable FLOP/s.
constexpr double kDominantShare = 0.2;
constexpr double kLowEfficiency = 0.3;
// fp32 GEMMs and convolutions on a tensor-core GPU: this share of the
// attributed device time.
constexpr double kFp32GemmShare = 0.1;
// CPU GEMMs below this share of the given CPU peak.
constexpr double kCpuBlasFraction = 0.25;
// Tensor cores tile fp16/bf16 GEMMs in multiples of 8 (PyProf's rule,
// NVIDIA's "Deep Learning Performance" guide).
constexpr int64_t kTensorCoreMultiple = 8;

double Share(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// "45%", and one decimal below 10 % so small shares do not read as 0.
std::string Pct(double fraction) {
  return fmt::format(fraction < 0.1 ? "{:.1f}%" : "{:.0f}%", 100 * fraction);
}

// Time covered by the union of intervals, and the span from first to last.
std::pair<int64_t, int64_t> BusyAndSpan(std::vector<std::pair<int64_t, int64_t>> intervals) {
  if (intervals.empty()) return {0, 0};
  std::sort(intervals.begin(), intervals.end());
  int64_t busy = 0, cursor = intervals.front().first, end = cursor;
  for (const auto& [start, stop] : intervals) {
    cursor = std::max(cursor, start);
    if (stop > cursor) {
      busy = SaturatingAdd(busy, SaturatingSub(stop, cursor));  // crafted times: no overflow
      cursor = stop;
    }
    end = std::max(end, stop);
  }
  return {busy, SaturatingSub(end, intervals.front().first)};
}

void LaunchBound(const AnalysisView& view, std::vector<Recommendation>& out) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> busy;
  std::map<int, std::vector<int64_t>> kernels;
  for (const DeviceOpEvent& event : view.device.events) {
    busy[event.plane].push_back({event.start_ps, SaturatingAdd(event.start_ps, event.duration_ps)});
    if (event.kind == "kernel") kernels[event.plane].push_back(event.duration_ps);
  }
  for (auto& [plane, durations] : kernels) {
    if (static_cast<int64_t>(durations.size()) < kLaunchBoundMinKernels) continue;
    std::nth_element(durations.begin(), durations.begin() + durations.size() / 2, durations.end());
    const int64_t median = durations[durations.size() / 2];
    const auto [busy_ps, span_ps] = BusyAndSpan(busy[plane]);
    const double idle = 1 - Share(busy_ps, span_ps);
    if (median >= kShortKernelPs || idle < kLaunchBoundIdle) continue;
    out.push_back(
        {"launch_bound",
         "launch-bound: the device waits for many short kernels; fuse ops "
         "(torch.compile, fused optimizers), use CUDA graphs or larger batches",
         fmt::format("{}: {} kernels, median {} us, device idle {} of the time "
                     "between its first and last event",
                     view.peaks.planes.at(plane).device, durations.size(), Us(median), Pct(idle))});
  }
}

void HostBound(const AnalysisView& view, std::vector<Recommendation>& out) {
  int64_t duration = 0, device_busy = 0, host_idle = 0;
  for (const StepBreakdown& step : view.steps) {
    if (!step.has_device) return;
    duration = SaturatingAdd(duration, step.duration_ps);
    device_busy = SaturatingAdd(device_busy, step.device_busy_ps);
    host_idle = SaturatingAdd(host_idle, step.idle_ps);
  }
  const double device = Share(device_busy, duration);
  const double host = 1 - Share(host_idle, duration);
  if (duration <= 0 || device >= kHostBoundDeviceBusy || host < kHostBusy) return;
  out.push_back({"host_bound",
                 "host-bound: the device idles while the host works; overlap data loading "
                 "(more loader workers, pinned memory), move host work off the step, or batch more",
                 fmt::format("over {} steps the device was busy {} of the step time while the "
                             "host ran ops or markers {} of it",
                             view.steps.size(), Pct(device), Pct(host))});
}

// The share of its device's op time a row takes.
double RowShare(const AnalysisView& view, const OpTableRow& row) {
  return row.device_ps > 0 ? Share(row.device_ps, view.table.total_device_ps)
                           : Share(row.total_ps, view.table.total_self_ps);
}

void LowRoofline(const AnalysisView& view, std::vector<Recommendation>& out) {
  const RooflinePoint* dominant = nullptr;
  for (const RooflinePoint& point : view.roofline.ops) {
    if (dominant == nullptr ||
        RowTimePs(view.table.rows[point.row]) > RowTimePs(view.table.rows[dominant->row])) {
      dominant = &point;
    }
  }
  if (dominant == nullptr) return;
  const OpTableRow& row = view.table.rows[dominant->row];
  const double share = RowShare(view, row);
  if (share < kDominantShare || dominant->Efficiency() >= kLowEfficiency) return;
  const char* bound = !dominant->bound_known   ? "bound unknown"
                      : dominant->memory_bound ? "memory-bound"
                                               : "compute-bound";
  out.push_back(
      {"low_roofline",
       fmt::format("{} dominates but runs far below its roofline: check its implementation "
                   "(kernels or library, dtype, layout, shapes) or fuse it with its neighbours",
                   row.op),
       fmt::format("{} ({}) takes {} of the op time on {} at {}FLOP/s, {} of the "
                   "attainable {}FLOP/s ({}, {:.1f} FLOP/byte)",
                   row.op, row.params, Pct(share), PeakAt(view.peaks, dominant->plane).device,
                   Si(dominant->achieved), Pct(dominant->Efficiency()), Si(dominant->attainable),
                   bound, dominant->intensity)});
}

void TensorCoreDims(const AnalysisView& view, std::vector<Recommendation>& out) {
  std::vector<std::string> found;
  for (const OpTableRow& row : view.table.rows) {
    const bool half = row.matrix_dtype == DType::kHalf || row.matrix_dtype == DType::kBFloat16;
    if (row.matrix_dims.empty() || !(half || PeakOf(row, view.peaks).tensor_cores)) continue;
    for (const auto& [name, dim] : row.matrix_dims) {
      if (dim > 1 && dim % kTensorCoreMultiple != 0) {
        found.push_back(fmt::format("{} ({}): {}={}", row.op, row.params, name, dim));
        break;
      }
    }
    if (found.size() == 3) break;  // rows are longest first
  }
  if (found.empty()) return;
  out.push_back({"tensor_core_dims",
                 "pad GEMM/conv dims to multiples of 8 so tensor cores can tile them "
                 "(batch, hidden sizes, vocabulary, channels)",
                 fmt::format("not a multiple of 8: {}", fmt::join(found, "; "))});
}

void Fp32Gemm(const AnalysisView& view, std::vector<Recommendation>& out) {
  int64_t fp32_ps = 0;
  const DevicePeak* peak = nullptr;
  for (const OpTableRow& row : view.table.rows) {
    const bool fp32_gemm = !row.matrix_dims.empty() && row.matrix_dtype == DType::kFloat;
    const DevicePeak& on = PeakOf(row, view.peaks);
    if (!fp32_gemm || row.device_ps <= 0 || !on.tensor_cores) continue;
    fp32_ps = SaturatingAdd(fp32_ps, row.device_ps);
    peak = &on;
  }
  const double share = Share(fp32_ps, view.table.total_device_ps);
  if (peak == nullptr || share < kFp32GemmShare) return;
  out.push_back(
      {"fp32_gemm",
       "run GEMMs and convolutions in bf16/fp16 (autocast) or allow TF32: this GPU's "
       "tensor cores are idle for fp32",
       fmt::format("fp32 GEMMs/convolutions take {} of the attributed device time on {} "
                   "(peak {}FLOP/s fp16/bf16 vs {}FLOP/s fp32)",
                   Pct(share), peak->device, Si(peak->fp16_flops), Si(peak->fp32_flops))});
}

void CpuBlasSlow(const AnalysisView& view, std::vector<Recommendation>& out) {
  if (!view.peaks.cpu.known) return;
  int64_t flops = 0, ps = 0;
  std::vector<std::string> ops;
  for (const OpTableRow& row : view.table.rows) {
    if (row.matrix_dims.empty() || row.device_ps > 0 || row.flops <= 0) continue;
    flops = SaturatingAdd(flops, row.flops);
    ps = SaturatingAdd(ps, row.total_ps);
    if (std::find(ops.begin(), ops.end(), row.op) == ops.end()) ops.push_back(row.op);
  }
  if (ps <= 0) return;
  const double rate = static_cast<double>(flops) / (static_cast<double>(ps) * 1e-12);
  const double fraction = rate / view.peaks.cpu.fp32_flops;
  if (fraction >= kCpuBlasFraction) return;
  out.push_back(
      {"cpu_blas_slow",
       "CPU GEMMs run far below the CPU's peak: check the BLAS libtorch uses "
       "(MKL/oneDNN, OpenBLAS), its thread count (OMP_NUM_THREADS) and the shapes",
       fmt::format("{} ran at {}FLOP/s, {} of the given peak {}FLOP/s", fmt::join(ops, ", "),
                   Si(rate), Pct(fraction), Si(view.peaks.cpu.fp32_flops))});
}

}  // namespace

std::vector<Recommendation> Recommend(const AnalysisView& view) {
  std::vector<Recommendation> out;
  LaunchBound(view, out);
  // Launch-bound already explains an idle device.
  if (out.empty()) HostBound(view, out);
  LowRoofline(view, out);
  TensorCoreDims(view, out);
  Fp32Gemm(view, out);
  CpuBlasSlow(view, out);
  return out;
}

}  // namespace analysis
}  // namespace neuronprof
