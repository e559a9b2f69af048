// Reading an XEvent's stats by name (its metadata's stats, then its own)
// and writing them as the "args" object of a trace event.
#ifndef NEURONPROF_SRC_EXPORT_EVENT_STATS_H_
#define NEURONPROF_SRC_EXPORT_EVENT_STATS_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace exporter {

// Stat names of one plane, by metadata id.
class PlaneStatNames {
 public:
  explicit PlaneStatNames(const tensorflow::profiler::XPlane& plane);
  std::string_view Name(int64_t id) const;
  const tensorflow::profiler::XPlane& plane() const { return plane_; }

 private:
  const tensorflow::profiler::XPlane& plane_;
  absl::flat_hash_map<int64_t, std::string_view> names_;
};

// A stat's value as JSON: numbers (NaN and infinities as null), strings
// and interned strings (ref_value, named in `names`), bytes as "<N bytes>".
// The one stat writer of both JSON exports.
void AppendStatValue(std::string* out, const tensorflow::profiler::XStat& stat,
                     const PlaneStatNames& names);

// The stats of one event by name: its metadata's stats, then its own (which
// win on a clash). Or the stats of the plane itself.
class EventStats {
 public:
  EventStats(const PlaneStatNames& names, const tensorflow::profiler::XEvent& event);
  EventStats(const PlaneStatNames& names, const tensorflow::profiler::XPlane& plane);

  const tensorflow::profiler::XStat* Find(std::string_view name) const;
  // The stat read by xplane::IntValue (its one integer rule: int64,
  // uint64 within int64, doubles truncated within int64, decimal strings).
  std::optional<int64_t> Int(std::string_view name) const;
  // String and ref (interned string) stats (xplane::StrValue).
  std::optional<std::string_view> Str(std::string_view name) const;
  const std::vector<std::pair<std::string_view, const tensorflow::profiler::XStat*>>& all()
      const {
    return stats_;
  }
  // The stat's value as JSON (AppendStatValue).
  void AppendValue(std::string* out, const tensorflow::profiler::XStat& stat) const;

 private:
  void Add(const tensorflow::profiler::XStat& stat);

  const PlaneStatNames& names_;
  std::vector<std::pair<std::string_view, const tensorflow::profiler::XStat*>> stats_;
};

// The "args" object of one trace event, appended to `out`; written only if
// a key is added. Close() ends it.
class JsonArgs {
 public:
  explicit JsonArgs(std::string* out) : out_(out) {}
  void Key(std::string_view key);
  void Int(std::string_view key, int64_t value);
  void Double(std::string_view key, double value);
  void Str(std::string_view key, std::string_view value);
  void Raw(std::string_view key, std::string_view json);  // Already JSON.
  // Copies every stat not in `skip` under its own name.
  void PassThrough(const EventStats& stats, std::initializer_list<std::string_view> skip);
  void Close();

 private:
  std::string* out_;
  bool first_ = true;
};

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_EVENT_STATS_H_
