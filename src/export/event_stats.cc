#include "src/export/event_stats.h"

#include <algorithm>
#include <cstring>

#include "src/xplane/work_count.h"

namespace neuronprof {
namespace exporter {

using tensorflow::profiler::XStat;

StatNames::StatNames(const xplane::PlaneVisitor& plane) {
  const auto& metadata = plane.raw().stat_metadata();
  dense_.resize(DenseTableSize(metadata));
  for (const auto& [id, stat] : metadata) {
    const bool dense = id >= 0 && static_cast<uint64_t>(id) < dense_.size();
    Entry& entry = dense ? dense_[static_cast<size_t>(id)] : sparse_[id];
    entry.name = stat.name();
    entry.escaped = json::Escaped(stat.name());
    entry.name_id = plane.StatId(stat.name());
  }
}

EventNames::EventNames(const xplane::PlaneVisitor& plane) {
  const auto& metadata = plane.raw().event_metadata();
  dense_.resize(DenseTableSize(metadata));
  for (const auto& [id, event] : metadata) {
    const bool dense = id >= 0 && static_cast<uint64_t>(id) < dense_.size();
    (dense ? dense_[static_cast<size_t>(id)] : sparse_[id]) =
        json::Escaped(event.display_name().empty() ? event.name() : event.display_name());
  }
}

void WriteStatValue(json::Writer* out, const xplane::StatVisitor& stat, const StatNames& names) {
  if (stat.raw().value_case() != XStat::kRefValue) return WriteStatValue(out, stat);
  const StatNames::Entry* ref = names.Find(static_cast<int64_t>(stat.raw().ref_value()));
  out->Raw(ref == nullptr ? std::string_view("\"\"") : std::string_view(ref->escaped));
}

void WriteStatArg(json::Writer* out, const StatNames::Entry& key, const xplane::StatVisitor& stat,
                  const StatNames& names) {
  out->Char(',');
  out->Raw(key.escaped);
  out->Char(':');
  WriteStatValue(out, stat, names);
}

void WriteStatValue(json::Writer* out, const xplane::StatVisitor& stat) {
  const XStat& raw = stat.raw();
  switch (raw.value_case()) {
    case XStat::kDoubleValue:
      out->Double(raw.double_value());
      break;
    case XStat::kUint64Value:
      out->Int(raw.uint64_value());
      break;
    case XStat::kInt64Value:
      out->Int(raw.int64_value());
      break;
    case XStat::kStrValue:
    case XStat::kRefValue:
      out->String(stat.StrValue().value_or(""));
      break;
    case XStat::kBytesValue:
      out->Char('"');
      out->Raw("<");
      out->Int(raw.bytes_value().size());
      out->Raw(" bytes>\"");
      break;
    default:
      out->Raw("null");
      break;
  }
}

uint64_t JsonArgs::Print(std::string_view key) {
  // In registers (one 8-byte load, or the bytes of a short key shifted in):
  // bytes stored and read back as a word would stall the store buffer.
  uint64_t head = 0;
  if (key.size() >= 8) {
    std::memcpy(&head, key.data(), 8);
  } else {
    for (size_t i = 0; i < key.size(); ++i) {
      head |= uint64_t{static_cast<unsigned char>(key[i])} << (8 * i);
    }
  }
  return head << 8 ^ static_cast<uint8_t>(key.size());
}

bool JsonArgs::Seen(std::string_view key) {
  const uint64_t print = Print(key);
  if (written_ < kIndexAt) {
    xplane::CountWork(written_);
    for (size_t i = 0; i < written_; ++i) {
      if (prints_[i] == print && std::string_view(key_data_[i], key_size_[i]) == key) return true;
    }
    prints_[written_] = print;
    key_data_[written_] = key.data();
    key_size_[written_] = key.size();
  } else {
    if (index_.empty()) {
      for (size_t i = 0; i < kIndexAt; ++i) index_.emplace(key_data_[i], key_size_[i]);
    }
    xplane::CountWork();
    if (!index_.insert(key).second) return true;
  }
  out_->Raw(written_ == 0 ? ",\"args\":{" : ",");
  ++written_;
  return false;
}

bool JsonArgs::Key(std::string_view key) {
  if (Seen(key)) return false;
  out_->String(key);
  out_->Char(':');
  return true;
}

bool JsonArgs::EscapedKey(std::string_view key, std::string_view escaped) {
  if (Seen(key)) return false;
  out_->Raw(escaped);
  out_->Char(':');
  return true;
}

void JsonArgs::Int(std::string_view key, int64_t value) {
  if (Key(key)) out_->Int(value);
}

void JsonArgs::Double(std::string_view key, double value) {
  if (Key(key)) out_->Double(value);
}

void JsonArgs::Str(std::string_view key, std::string_view value) {
  if (Key(key)) out_->String(value);
}

void JsonArgs::Raw(std::string_view key, std::string_view json) {
  if (Key(key)) out_->Raw(json);
}

void JsonArgs::PassThrough(const xplane::EventVisitor& event,
                           absl::Span<const std::string_view> skip) {
  event.ForEachStat([&](const xplane::StatVisitor& stat) {
    const std::string_view name = stat.Name();
    if (name.empty() || std::find(skip.begin(), skip.end(), name) != skip.end()) return;
    if (Key(name)) WriteStatValue(out_, stat);
  });
}

void JsonArgs::PassThrough(const xplane::EventVisitor& event, const StatNames& names,
                           absl::Span<const int64_t> skip) {
  event.ForEachStat([&](const xplane::StatVisitor& stat) {
    const StatNames::Entry* entry = names.Find(stat.Id());
    if (entry == nullptr || entry->name.empty() ||
        std::find(skip.begin(), skip.end(), entry->name_id) != skip.end()) {
      return;
    }
    if (EscapedKey(entry->name, entry->escaped)) WriteStatValue(out_, stat, names);
  });
}

void JsonArgs::Close() {
  if (written_ > 0) out_->Char('}');
}

}  // namespace exporter
}  // namespace neuronprof
