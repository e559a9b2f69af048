#include "src/analysis/report/device_sections.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "src/analysis/text/terminal_text.h"
#include "src/analysis/text/text_table.h"

namespace neuronprof {
namespace analysis {
namespace {

std::string Dim3(const std::optional<std::array<int64_t, 3>>& dims) {
  if (!dims) return "-";
  return fmt::format("{},{},{}", (*dims)[0], (*dims)[1], (*dims)[2]);
}

template <typename T>
std::string Optional(const std::optional<T>& value, const char* format) {
  return value ? fmt::format(format, *value) : "-";
}

std::string Rate(double value) { return value > 0 ? Si(value) : "-"; }

std::vector<std::string> RooflineCells(std::string op, std::string params, const DevicePeak& peak,
                                       const RooflinePoint& point) {
  return {std::move(op),
          std::move(params),
          peak.device,
          Si(point.achieved),
          point.intensity > 0 ? fmt::format("{:.1f}", point.intensity) : "-",
          Si(point.attainable),
          fmt::format("{:.1f}%", 100 * point.Efficiency()),
          !point.bound_known   ? "?"
          : point.memory_bound ? "memory"
                               : "compute"};
}

void AppendTransfers(const KernelTable& kernels, size_t top, fmt::memory_buffer& out) {
  if (kernels.transfers.empty()) return;
  TextTable text({"Copy/set", "Calls", "Total(us)", "Bytes", "Bandwidth(B/s)"},
                 {false, true, true, true, true});
  for (size_t i = 0; i < std::min(top, kernels.transfers.size()); ++i) {
    const TransferRow& row = kernels.transfers[i];
    const bool unknown = row.unknown_bytes_calls == row.calls;
    text.Add({row.name, fmt::format("{}", row.calls), Us(row.total_ps),
              unknown ? "-" : Bytes(row.bytes), Rate(row.BytesPerSecond())});
  }
  text.RenderTo(out);
}

}  // namespace

void AppendKernelTable(const KernelTable& kernels, const DeviceEvents& device, size_t top,
                       fmt::memory_buffer& out) {
  auto to = std::back_inserter(out);
  if (device.planes.empty()) return;
  fmt::format_to(to,
                 "\nDevice events: {} ({} attributed to an operator by correlation id, {} by "
                 "its framework-op stat, {} unattributed; {} to a user marker around the "
                 "launch, {} to neither){}\n",
                 device.events.size(), device.by_correlation, device.by_framework_op,
                 device.unattributed, device.to_marker, device.to_neither,
                 device.reported_flops > 0
                     ? fmt::format("; {} FLOPs reported by the runtime",
                                   Si(static_cast<double>(device.reported_flops)))
                     : "");
  if (!kernels.kernels.empty()) {
    fmt::format_to(to, "\nKernels: {} distinct, {} ms, {} of it in tensor-core kernels\n",
                   kernels.kernels.size(), Ms(kernels.kernel_ps),
                   Percent(kernels.tensor_core_ps, kernels.kernel_ps));
    TextTable text(
        {"Kernel", "Calls", "Total(us)", "Mean(us)", "Min(us)", "Max(us)", "Grid", "Block", "Regs",
         "Shared", "Occ%", "Achieved%", "TC"},
        {false, true, true, true, true, true, true, true, true, true, true, true, false});
    const size_t shown = std::min(top, kernels.kernels.size());
    for (size_t i = 0; i < shown; ++i) {
      const KernelRow& row = kernels.kernels[i];
      text.Add({Shorten(row.name, 60), fmt::format("{}", row.calls), Us(row.total_ps),
                Us(row.MeanPs()), Us(row.min_ps), Us(row.max_ps), Dim3(row.launch.grid),
                Dim3(row.launch.block), Optional(row.launch.registers_per_thread, "{}"),
                Optional(row.launch.shared_memory, "{}"),
                Optional(row.launch.occupancy_pct, "{:.0f}"),
                Optional(row.achieved_occupancy_pct, "{:.0f}"), row.tensor_cores ? "yes" : "-"});
    }
    text.RenderTo(out);
    if (shown < kernels.kernels.size()) {
      fmt::format_to(to, "  ... {} more kernels (--top N, --kernel_csv)\n",
                     kernels.kernels.size() - shown);
    }
    fmt::format_to(to,
                   "  Occ%: theoretical occupancy; Achieved%: estimated, time-weighted; TC: "
                   "tensor cores by kernel name\n");
  }
  AppendTransfers(kernels, top, out);
}

void AppendRoofline(const Roofline& roofline, const OpTable& table, const DevicePeaks& peaks,
                    size_t top, fmt::memory_buffer& out) {
  auto to = std::back_inserter(out);
  fmt::format_to(
      to,
      "\nUtilisation over {} ms of wall time: MFU = FLOPs / (that time x peak). The time "
      "the steps cover, steps that overlap (a server's workers) counted once, unlike the "
      "step table's 'all steps', which adds them up; without steps the span of the ops, "
      "else of the device events\n",
      Ms(roofline.wall_ps));
  for (const DeviceRoofline& device : roofline.devices) {
    const DevicePeak& peak = PeakAt(peaks, device.plane);
    if (!peak.known) {
      fmt::format_to(to, "  no peak known for {}{}\n", TerminalText(peak.device),
                     device.plane < 0 ? " (give --cpu_peak_gflops)" : "");
      continue;
    }
    if (!device.flops_known) {
      fmt::format_to(to,
                     "  {}: MFU - (FLOPs unknown: no op with a known cost ran there and the "
                     "runtime reported none; peak {}FLOP/s, {}B/s; {})\n",
                     TerminalText(peak.device), Si(peak.FlopsFor(DType::kFloat)),
                     peak.bytes_per_s > 0 ? Si(peak.bytes_per_s) : "?", peak.source);
      continue;
    }
    fmt::format_to(to, "  {}: MFU {:.2f}% ({} FLOPs{}, {} peak {}FLOP/s, {}B/s; {})\n",
                   TerminalText(peak.device), 100 * device.mfu,
                   Si(static_cast<double>(device.flops)),
                   device.reported ? " reported by the runtime" : "",
                   DTypeName(device.dtype == DType::kNone ? DType::kFloat : device.dtype),
                   Si(peak.FlopsFor(device.dtype)),
                   peak.bytes_per_s > 0 ? Si(peak.bytes_per_s) : "?", peak.source);
  }
  if (roofline.ops.empty() && roofline.markers.empty()) return;
  TextTable text({"Op", "Params", "Device", "FLOP/s", "FLOP/B", "Attainable", "% of roof", "Bound"},
                 {false, false, false, true, true, true, true, false});
  for (size_t i = 0; i < std::min(top, roofline.ops.size()); ++i) {
    const RooflinePoint& point = roofline.ops[i];
    const OpTableRow& row = table.rows[point.row];
    text.Add(RooflineCells(row.op, Shorten(row.params, 40), PeakAt(peaks, point.plane), point));
  }
  for (size_t i = 0; i < std::min(top, roofline.markers.size()); ++i) {
    const MarkerRoofline& marker = roofline.markers[i];
    text.Add(
        RooflineCells(marker.marker, "(marker)", PeakAt(peaks, marker.point.plane), marker.point));
  }
  text.RenderTo(out);
  fmt::format_to(
      to,
      "  Roofline: attainable = min(peak, FLOP/B x bandwidth); FLOP/s over device "
      "time, else host time; (marker): the FLOPs the runtime reported for the device work "
      "a marker launched, over its device time\n");
}

void AppendRecommendations(const std::vector<Recommendation>& recommendations,
                           fmt::memory_buffer& out) {
  auto to = std::back_inserter(out);
  fmt::format_to(to, "\nRecommendations:{}\n", recommendations.empty() ? " none" : "");
  for (const Recommendation& r : recommendations) {
    fmt::format_to(to, "  [{}] {}\n      evidence: {}\n", r.id, TerminalText(r.advice),
                   TerminalText(r.evidence));
  }
}

ReportTable KernelReportTable(const KernelTable& kernels) {
  ReportTable table{"kernels",
                    {"kind", "name", "calls", "total_us", "mean_us", "min_us", "max_us", "grid",
                     "block", "registers", "shared_bytes", "occupancy_pct",
                     "achieved_occupancy_pct", "tensor_cores", "bytes", "bytes_per_s"},
                    {}};
  auto cell = [](const auto& value) {
    if (!value) return Cell::Empty();
    if constexpr (std::is_floating_point_v<std::decay_t<decltype(*value)>>) {
      return Cell::Number(*value);
    } else {
      return Cell::Int(*value);
    }
  };
  auto dim = [](const auto& value) { return value ? Cell::Text(Dim3(value)) : Cell::Empty(); };
  for (const KernelRow& row : kernels.kernels) {
    table.rows.push_back({Cell::Text("kernel"), Cell::Text(row.name), Cell::Int(row.calls),
                          Cell::Micros(row.total_ps), Cell::Micros(row.MeanPs()),
                          Cell::Micros(row.min_ps), Cell::Micros(row.max_ps), dim(row.launch.grid),
                          dim(row.launch.block), cell(row.launch.registers_per_thread),
                          cell(row.launch.shared_memory), cell(row.launch.occupancy_pct),
                          cell(row.achieved_occupancy_pct), Cell::Int(row.tensor_cores ? 1 : 0),
                          Cell::Empty(), Cell::Empty()});
  }
  for (const TransferRow& row : kernels.transfers) {
    const bool unknown = row.unknown_bytes_calls == row.calls;
    const double rate = row.BytesPerSecond();
    std::vector<Cell> cells = {Cell::Text(row.kind), Cell::Text(row.name), Cell::Int(row.calls),
                               Cell::Micros(row.total_ps)};
    cells.resize(14, Cell::Empty());
    cells.push_back(unknown ? Cell::Empty() : Cell::Int(row.bytes));
    cells.push_back(rate > 0 ? Cell::Number(rate, 6) : Cell::Empty());
    table.rows.push_back(std::move(cells));
  }
  return table;
}

std::string FormatKernelCsv(const KernelTable& kernels) {
  return FormatCsv(KernelReportTable(kernels));
}

}  // namespace analysis
}  // namespace neuronprof
