#include "src/analysis/op_table.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "src/analysis/saturating.h"

namespace neuronprof {
namespace analysis {

double OpTableRow::FlopsPerSecond() const {
  if (flops <= 0 || total_ps <= 0) return 0;
  return static_cast<double>(flops) / (static_cast<double>(total_ps) * 1e-12);
}

OpTable BuildOpTable(const OperatorEvents& events) {
  OpTable table;
  table.malformed_inputs = events.malformed_inputs;
  table.first_input_error = events.first_input_error;
  using Key = std::tuple<std::string_view, std::string_view, std::string_view, std::string_view>;
  std::map<Key, OpTableRow> rows;
  std::map<std::string_view, OpShare> shares;
  for (const OperatorEvent& op : events.ops) {
    OpTableRow& row = rows[Key(op.layer, op.direction, op.name, op.formula->params)];
    if (row.calls == 0) {
      row.layer = op.layer;
      row.direction = op.direction;
      row.op = op.name;
      row.params = op.formula->params;
    }
    ++row.calls;
    row.total_ps = SaturatingAdd(row.total_ps, op.duration_ps);
    row.self_ps = SaturatingAdd(row.self_ps, op.self_ps);
    switch (op.source) {
      case CostSource::kOwn: ++row.own_calls; break;
      case CostSource::kInChildren: ++row.in_children_calls; break;
      case CostSource::kUnknown: ++row.unknown_calls; ++table.unknown_calls; break;
    }
    row.flops = SaturatingAdd(row.flops, op.self_flops);
    row.bytes = SaturatingAdd(row.bytes, op.self_bytes);
    table.total_flops = SaturatingAdd(table.total_flops, op.self_flops);
    table.total_bytes = SaturatingAdd(table.total_bytes, op.self_bytes);
    ++table.calls;

    OpShare& share = shares[op.name];
    share.op = op.name;
    ++share.calls;
    share.self_ps = SaturatingAdd(share.self_ps, op.self_ps);
    table.total_self_ps = SaturatingAdd(table.total_self_ps, op.self_ps);
  }
  for (auto& [key, row] : rows) table.rows.push_back(std::move(row));
  std::stable_sort(table.rows.begin(), table.rows.end(),
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
