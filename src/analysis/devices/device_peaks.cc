#include "src/analysis/devices/device_peaks.h"

#include <cmath>

#include "absl/strings/numbers.h"
#include "fmt/format.h"
#include "src/xplane/device_details.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace analysis {
namespace {

// Dense rates per SM per clock from NVIDIA's architecture whitepapers
// (Volta, Turing, Ampere GA100 / GA102, Ada, Hopper) and the CUDA
// Programming Guide's arithmetic-throughput table; the reference parts'
// SMs, boost clocks and bandwidths are their datasheets'. fp16 tensor
// rates are with fp32 accumulation on data-center parts.
constexpr NvidiaArch kNvidiaArchs[] = {
    {7, 0, 128, 1024, 64, "Tesla V100 SXM2", 80, 1530, 900},
    {7, 5, 128, 1024, 4, "Tesla T4", 40, 1590, 320},
    {8, 0, 128, 2048, 64, "A100 SXM4 40GB", 108, 1410, 1555},
    {8, 6, 256, 1024, 4, "A10", 72, 1695, 600},
    {8, 9, 256, 1024, 4, "L4", 58, 2040, 300},
    {9, 0, 256, 4096, 128, "H100 SXM5", 132, 1980, 3350},
};

// A plane stat as a finite number: integers, doubles or decimal text (a
// crafted NaN or infinity is no peak).
std::optional<double> NumberStat(const xplane::PlaneVisitor& plane, std::string_view name) {
  const auto stat = plane.PlaneStat(name);
  if (!stat) return std::nullopt;
  double value = 0;
  if (stat->raw().value_case() == tensorflow::profiler::XStat::kDoubleValue) {
    value = stat->raw().double_value();
  } else if (const auto number = stat->IntValue()) {
    value = static_cast<double>(*number);
  } else {
    const auto text = stat->StrValue();
    if (!text || !absl::SimpleAtod(absl::string_view(text->data(), text->size()), &value)) {
      return std::nullopt;
    }
  }
  if (!std::isfinite(value)) return std::nullopt;
  return value;
}

std::string Label(const xplane::PlaneVisitor& plane) {
  std::string label(plane.Name());
  const std::string name = xplane::DeviceName(plane);
  if (!name.empty()) label += " " + name;
  return label;
}

// A plug-in's own peaks (TSL's device-capability stats).
bool ReportedPeak(const xplane::PlaneVisitor& plane, DevicePeak& peak) {
  const auto tflops = NumberStat(plane, xplane::kPeakTeraflopsStat);
  if (!tflops || *tflops <= 0) return false;
  peak.known = true;
  peak.fp32_flops = peak.fp16_flops = peak.fp64_flops = *tflops * 1e12;
  if (const auto gbps = NumberStat(plane, xplane::kPeakHbmBandwidthStat); gbps && *gbps > 0) {
    peak.bytes_per_s = *gbps * 1e9;
  }
  peak.source = "reported by the device plug-in (all dtypes)";
  return true;
}

bool NvidiaPeak(const xplane::PlaneVisitor& plane, DevicePeak& peak) {
  const auto capability = xplane::ComputeCapability(plane);
  if (!capability) return false;
  const auto arch =
      FindNvidiaArch(static_cast<int>((*capability)[0]), static_cast<int>((*capability)[1]));
  peak.device += fmt::format(" (cc {}.{})", (*capability)[0], (*capability)[1]);
  if (!arch) return false;
  const auto sms = NumberStat(plane, xplane::kCoreCountStat);
  const auto khz = NumberStat(plane, xplane::kClockRateStat);
  const bool measured = sms && khz && *sms > 0 && *khz > 0;
  const double sm_hz =
      measured ? *sms * *khz * 1e3 : arch->reference_sms * arch->reference_mhz * 1e6;
  peak.known = true;
  peak.tensor_cores = arch->major >= 7;
  peak.fp32_flops = arch->fp32_per_sm_clock * sm_hz;
  peak.fp16_flops = arch->fp16_tensor_per_sm_clock * sm_hz;
  peak.fp64_flops = arch->fp64_per_sm_clock * sm_hz;
  const auto bandwidth = NumberStat(plane, xplane::kMemoryBandwidthStat);
  peak.bytes_per_s = bandwidth && *bandwidth > 0 ? *bandwidth : arch->reference_gb_per_s * 1e9;
  peak.source = measured ? "cc table x the plane's SMs and clock"
                         : fmt::format("cc table, reference {}", arch->reference);
  return true;
}

}  // namespace

double DevicePeak::FlopsFor(DType dtype) const {
  switch (dtype) {
    case DType::kHalf:
    case DType::kBFloat16:
      return fp16_flops;
    case DType::kDouble:
      return fp64_flops;
    default:
      return fp32_flops;
  }
}

std::optional<NvidiaArch> FindNvidiaArch(int major, int minor) {
  for (const NvidiaArch& arch : kNvidiaArchs) {
    if (arch.major == major && arch.minor == minor) return arch;
  }
  return std::nullopt;
}

DevicePeak PlanePeak(const xplane::PlaneVisitor& plane) {
  DevicePeak peak;
  peak.device = Label(plane);
  if (!ReportedPeak(plane, peak)) NvidiaPeak(plane, peak);
  return peak;
}

DevicePeaks FindDevicePeaks(const tensorflow::profiler::XSpace& space,
                            const std::vector<int>& device_planes, const PeakOptions& options) {
  DevicePeaks peaks;
  for (int p : device_planes) {
    const xplane::PlaneVisitor plane(space.planes(p));
    peaks.planes[p] = PlanePeak(plane);
  }
  peaks.cpu.device = "CPU";
  if (options.cpu_peak_gflops > 0) {
    peaks.cpu.known = true;
    peaks.cpu.fp32_flops = peaks.cpu.fp16_flops = peaks.cpu.fp64_flops =
        options.cpu_peak_gflops * 1e9;
    peaks.cpu.bytes_per_s = options.cpu_peak_gb_per_s * 1e9;
    peaks.cpu.source = "--cpu_peak_gflops (all dtypes)";
  }
  return peaks;
}

}  // namespace analysis
}  // namespace neuronprof
