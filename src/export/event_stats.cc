#include "src/export/event_stats.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "src/export/json_text.h"
#include "src/xplane/stat_lookup.h"

namespace neuronprof {
namespace exporter {

using tensorflow::profiler::XEvent;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XStat;

PlaneStatNames::PlaneStatNames(const XPlane& plane) : plane_(plane) {
  for (const auto& [id, metadata] : plane.stat_metadata()) names_.emplace(id, metadata.name());
}

std::string_view PlaneStatNames::Name(int64_t id) const {
  auto it = names_.find(id);
  return it == names_.end() ? std::string_view() : it->second;
}

EventStats::EventStats(const PlaneStatNames& names, const XEvent& event) : names_(names) {
  auto metadata = names.plane().event_metadata().find(event.metadata_id());
  if (metadata != names.plane().event_metadata().end()) {
    for (const XStat& stat : metadata->second.stats()) Add(stat);
  }
  for (const XStat& stat : event.stats()) Add(stat);
}

EventStats::EventStats(const PlaneStatNames& names, const XPlane& plane) : names_(names) {
  for (const XStat& stat : plane.stats()) Add(stat);
}

const XStat* EventStats::Find(std::string_view name) const {
  for (const auto& [key, stat] : stats_) {
    if (key == name) return stat;
  }
  return nullptr;
}

std::optional<int64_t> EventStats::Int(std::string_view name) const {
  return xplane::IntValue(Find(name));
}

std::optional<std::string_view> EventStats::Str(std::string_view name) const {
  return xplane::StrValue(names_.plane(), Find(name));
}

void AppendStatValue(std::string* out, const XStat& stat, const PlaneStatNames& names) {
  switch (stat.value_case()) {
    case XStat::kDoubleValue: json::AppendDouble(out, stat.double_value()); break;
    case XStat::kUint64Value: json::AppendInt(out, stat.uint64_value()); break;
    case XStat::kInt64Value: json::AppendInt(out, stat.int64_value()); break;
    case XStat::kStrValue: json::AppendEscaped(out, stat.str_value()); break;
    case XStat::kRefValue:
      json::AppendEscaped(out, names.Name(static_cast<int64_t>(stat.ref_value())));
      break;
    case XStat::kBytesValue:
      json::AppendEscaped(out, absl::StrCat("<", stat.bytes_value().size(), " bytes>"));
      break;
    default: out->append("null"); break;
  }
}

void EventStats::AppendValue(std::string* out, const XStat& stat) const {
  AppendStatValue(out, stat, names_);
}

void EventStats::Add(const XStat& stat) {
  const std::string_view name = names_.Name(stat.metadata_id());
  for (auto& [key, existing] : stats_) {
    if (key == name) {
      existing = &stat;
      return;
    }
  }
  stats_.emplace_back(name, &stat);
}

void JsonArgs::Key(std::string_view key) {
  out_->append(first_ ? ",\"args\":{" : ",");
  first_ = false;
  json::AppendEscaped(out_, key);
  out_->push_back(':');
}

void JsonArgs::Int(std::string_view key, int64_t value) {
  Key(key);
  json::AppendInt(out_, value);
}

void JsonArgs::Double(std::string_view key, double value) {
  Key(key);
  json::AppendDouble(out_, value);
}

void JsonArgs::Str(std::string_view key, std::string_view value) {
  Key(key);
  json::AppendEscaped(out_, value);
}

void JsonArgs::Raw(std::string_view key, std::string_view json) {
  Key(key);
  out_->append(json.data(), json.size());
}

void JsonArgs::PassThrough(const EventStats& stats,
                           std::initializer_list<std::string_view> skip) {
  for (const auto& [name, stat] : stats.all()) {
    if (name.empty() || std::find(skip.begin(), skip.end(), name) != skip.end()) continue;
    Key(name);
    stats.AppendValue(out_, *stat);
  }
}

void JsonArgs::Close() {
  if (!first_) out_->push_back('}');
}

}  // namespace exporter
}  // namespace neuronprof
