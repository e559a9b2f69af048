#include "src/analysis/ops/op_table.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "src/xplane/saturating.h"

namespace neuronprof {
namespace analysis {

double OpTableRow::FlopsPerSecond() const {
  if (flops <= 0 || total_ps <= 0) return 0;
  return static_cast<double>(flops) / (static_cast<double>(total_ps) * 1e-12);
}

double OpTableRow::DeviceFlopsPerSecond() const {
  if (flops <= 0 || device_ps <= 0) return 0;
  return static_cast<double>(flops) / (static_cast<double>(device_ps) * 1e-12);
}

namespace {

// Per op: device time, kernels, and device time per plane.
struct OpDevice {
  int64_t ps = 0, kernels = 0;
  std::map<int, int64_t> by_plane;
};

std::vector<OpDevice> DeviceTimePerOp(size_t ops, const DeviceEvents* device) {
  std::vector<OpDevice> per_op(device == nullptr ? 0 : ops);
  if (device == nullptr) return per_op;
  for (const DeviceOpEvent& event : device->events) {
    if (event.op < 0 || static_cast<size_t>(event.op) >= ops) continue;
    OpDevice& op = per_op[event.op];
    op.ps = SaturatingAdd(op.ps, event.duration_ps);
    op.kernels += event.kind == "kernel";
    op.by_plane[event.plane] = SaturatingAdd(op.by_plane[event.plane], event.duration_ps);
  }
  return per_op;
}

}  // namespace

OpTable BuildOpTable(const OperatorEvents& events, const DeviceEvents* device) {
  OpTable table;
  table.malformed_inputs = events.malformed_inputs;
  table.first_input_error = events.first_input_error;
  using Key = std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;
  std::map<Key, OpTableRow> rows;
  std::map<std::string_view, OpShare> shares;
  const std::vector<OpDevice> per_op = DeviceTimePerOp(events.ops.size(), device);
  // Device time per plane of each row (map nodes do not move).
  std::map<const OpTableRow*, std::map<int, int64_t>> row_planes;
  for (const OperatorEvent& op : events.ops) {
    OpTableRow& row = rows[Key(op.layer, op.direction, op.name, op.formula->params)];
    if (row.calls == 0) {
      row.layer = op.layer;
      row.direction = op.direction;
      row.op = op.name;
      row.params = op.formula->params;
      row.matrix_dims = op.formula->matrix_dims;
      row.matrix_dtype = op.formula->matrix_dtype;
    }
    ++row.calls;
    row.total_ps = SaturatingAdd(row.total_ps, op.duration_ps);
    row.self_ps = SaturatingAdd(row.self_ps, op.self_ps);
    switch (op.source) {
      case CostSource::kOwn:
        ++row.own_calls;
        break;
      case CostSource::kInChildren:
        ++row.in_children_calls;
        break;
      case CostSource::kUnknown:
        ++row.unknown_calls;
        ++table.unknown_calls;
        break;
    }
    row.flops = SaturatingAdd(row.flops, op.self_flops);
    row.bytes = SaturatingAdd(row.bytes, op.self_bytes);
    if (!per_op.empty() && !per_op[&op - events.ops.data()].by_plane.empty()) {
      const OpDevice& on_device = per_op[&op - events.ops.data()];
      row.device_ps = SaturatingAdd(row.device_ps, on_device.ps);
      row.kernels += on_device.kernels;
      table.total_device_ps = SaturatingAdd(table.total_device_ps, on_device.ps);
      auto& planes = row_planes[&row];
      for (const auto& [plane, ps] : on_device.by_plane) {
        planes[plane] = SaturatingAdd(planes[plane], ps);
      }
    }
    table.total_flops = SaturatingAdd(table.total_flops, op.self_flops);
    table.total_bytes = SaturatingAdd(table.total_bytes, op.self_bytes);
    ++table.calls;

    OpShare& share = shares[op.name];
    share.op = op.name;
    ++share.calls;
    share.self_ps = SaturatingAdd(share.self_ps, op.self_ps);
    table.total_self_ps = SaturatingAdd(table.total_self_ps, op.self_ps);
  }
  for (auto& [key, row] : rows) {
    int64_t most = 0;
    for (const auto& [plane, ps] : row_planes[&row]) {
      if (ps > most) {
        most = ps;
        row.device_plane = plane;
      }
    }
    table.rows.push_back(std::move(row));
  }
  std::stable_sort(
      table.rows.begin(), table.rows.end(),
      [](const OpTableRow& a, const OpTableRow& b) { return a.total_ps > b.total_ps; });
  for (auto& [name, share] : shares) {
    share.percent = table.total_self_ps > 0
                        ? 100.0 * static_cast<double>(share.self_ps) / table.total_self_ps
                        : 0.0;
    table.shares.push_back(std::move(share));
  }
  std::stable_sort(table.shares.begin(), table.shares.end(),
                   [](const OpShare& a, const OpShare& b) { return a.self_ps > b.self_ps; });
  return table;
}

}  // namespace analysis
}  // namespace neuronprof
