#include "src/analysis/devices/kernel_table.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "absl/strings/ascii.h"
#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {
namespace {

// Occupancy sums weighted by time, per row.
struct OccupancySum {
  double weighted = 0;
  int64_t ps = 0;
};

template <typename Row>
void SortByTime(std::vector<Row>& rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.total_ps > b.total_ps; });
}

}  // namespace

double TransferRow::BytesPerSecond() const {
  if (known_ps <= 0 || bytes <= 0) return 0;
  return static_cast<double>(bytes) / (static_cast<double>(known_ps) * 1e-12);
}

bool UsesTensorCores(std::string_view kernel_name) {
  // tb_plugin's TC_Allowlist (from PyProf's tc.py) plus the markers of
  // newer kernels: Hopper's wgmma, CUTLASS's "tensorop", integer imma.
  static constexpr std::string_view kMarkers[] = {"884",
                                                  "1688",
                                                  "16816",
                                                  "hmma",
                                                  "imma",
                                                  "xmma",
                                                  "wgmma",
                                                  "tensorop",
                                                  "dgrad_1x1_stride_2x2",
                                                  "first_layer_wgrad_kernel",
                                                  "conv1x1",
                                                  "conv2d_c1_k1",
                                                  "direct_group"};
  const std::string lower =
      absl::AsciiStrToLower(absl::string_view(kernel_name.data(), kernel_name.size()));
  for (std::string_view marker : kMarkers) {
    if (lower.find(marker) != std::string::npos) return true;
  }
  return false;
}

KernelTable BuildKernelTable(const DeviceEvents& device) {
  KernelTable table;
  std::map<std::pair<std::string_view, std::string_view>, KernelRow> kernels;
  std::map<std::pair<std::string_view, std::string_view>, OccupancySum> occupancy;
  std::map<std::pair<std::string_view, std::string>, TransferRow> transfers;
  for (const DeviceOpEvent& event : device.events) {
    if (event.kind == "kernel") {
      const auto key = std::make_pair(event.name, event.details);
      KernelRow& row = kernels[key];
      if (row.calls == 0) {
        row.name = std::string(event.name);
        row.launch = xplane::ParseKernelDetails(event.details);
        row.tensor_cores = UsesTensorCores(event.name);
        row.min_ps = event.duration_ps;
      }
      ++row.calls;
      row.total_ps = SaturatingAdd(row.total_ps, event.duration_ps);
      row.min_ps = std::min(row.min_ps, event.duration_ps);
      row.max_ps = std::max(row.max_ps, event.duration_ps);
      if (event.achieved_occupancy_pct) {
        OccupancySum& sum = occupancy[key];
        sum.weighted += *event.achieved_occupancy_pct * static_cast<double>(event.duration_ps);
        sum.ps = SaturatingAdd(sum.ps, event.duration_ps);
      }
      table.kernel_ps = SaturatingAdd(table.kernel_ps, event.duration_ps);
      if (row.tensor_cores) {
        table.tensor_core_ps = SaturatingAdd(table.tensor_core_ps, event.duration_ps);
      }
    } else if (event.kind == "memcpy" || event.kind == "memset") {
      TransferRow& row = transfers[{event.name, event.kind}];
      row.name = std::string(event.name);
      row.kind = event.kind;
      ++row.calls;
      row.total_ps = SaturatingAdd(row.total_ps, event.duration_ps);
      if (event.bytes >= 0) {
        row.bytes = SaturatingAdd(row.bytes, event.bytes);
        row.known_ps = SaturatingAdd(row.known_ps, event.duration_ps);
      } else {
        ++row.unknown_bytes_calls;
      }
    }
  }
  for (auto& [key, row] : kernels) {
    auto sum = occupancy.find(key);
    if (sum != occupancy.end() && sum->second.ps > 0) {
      row.achieved_occupancy_pct = sum->second.weighted / static_cast<double>(sum->second.ps);
    }
    table.kernels.push_back(std::move(row));
  }
  for (auto& [key, row] : transfers) table.transfers.push_back(std::move(row));
  SortByTime(table.kernels);
  SortByTime(table.transfers);
  return table;
}

}  // namespace analysis
}  // namespace neuronprof
