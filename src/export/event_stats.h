// Writing stats (read through xplane::StatVisitor) as the "args" object of
// a trace event; the one stat writer of both JSON exports.
#ifndef NEURONPROF_SRC_EXPORT_EVENT_STATS_H_
#define NEURONPROF_SRC_EXPORT_EVENT_STATS_H_

#include <cstdint>
#include <string_view>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "src/export/json_text.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace exporter {

// A stat's value as JSON: numbers (NaN and infinities as null), strings
// and interned strings (ref_value), bytes as "<N bytes>", else null.
void WriteStatValue(json::Writer* out, const xplane::StatVisitor& stat);

// The "args" object of one trace event; written only if a key is added.
// Each key is written once: a later value under a key already written (a
// stat named like a translated argument, a stat repeated in a crafted
// file) is left out, so readers that refuse repeated keys read the file.
// Close() ends it.
class JsonArgs {
 public:
  explicit JsonArgs(json::Writer* out) : out_(out) {}
  // Starts the value of `key`; false (nothing written) if it was written.
  bool Key(std::string_view key);
  // The same with `key` already escaped (json::Escaped) by the caller.
  bool EscapedKey(std::string_view key, std::string_view escaped);
  void Int(std::string_view key, int64_t value);
  void Double(std::string_view key, double value);
  void Str(std::string_view key, std::string_view value);
  void Raw(std::string_view key, std::string_view json);  // Already JSON.
  // Every stat of `event` (xplane::EventVisitor::ForEachStat) whose name is
  // not empty and not in `skip`, under its own name.
  void PassThrough(const xplane::EventVisitor& event,
                   absl::Span<const std::string_view> skip);
  void Close();

 private:
  bool Seen(std::string_view key);

  json::Writer* out_;
  // Written so far: a few, searched in order; past kIndexAt, also hashed,
  // so that an event with many stats is not quadratic in them.
  static constexpr size_t kIndexAt = 16;
  absl::InlinedVector<std::string_view, 8> keys_;
  absl::flat_hash_set<std::string_view> index_;
};

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_EVENT_STATS_H_
