// Writing stats (read through xplane::StatVisitor) as the "args" object of
// a trace event; the one stat writer of both JSON exports.
#ifndef NEURONPROF_SRC_EXPORT_EVENT_STATS_H_
#define NEURONPROF_SRC_EXPORT_EVENT_STATS_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "src/export/json_text.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace exporter {

// Tables by metadata id: ids usually count from 1, so a vector indexed by
// id serves every id below DenseIdLimit (a few times the count); a crafted
// plane's larger ids go to a map beside it. DenseTableSize: one past the
// largest id of `metadata` (a protobuf map by id) below that limit.
inline uint64_t DenseIdLimit(size_t count) { return 4 * static_cast<uint64_t>(count) + 64; }
template <typename MetadataMap>
size_t DenseTableSize(const MetadataMap& metadata) {
  const uint64_t limit = DenseIdLimit(metadata.size());
  size_t size = 0;
  for (const auto& entry : metadata) {
    const int64_t id = entry.first;
    if (id >= 0 && static_cast<uint64_t>(id) < limit && static_cast<size_t>(id) >= size) {
      size = static_cast<size_t>(id) + 1;
    }
  }
  return size;
}

// A plane's stat metadata names, each escaped once: the keys of args and
// the text of interned (ref_value) strings, found by id in O(1) (not a
// protobuf map look-up and an escape per stat of a million events).
class StatNames {
 public:
  struct Entry {
    std::string_view name;
    std::string escaped;   // json::Escaped(name); empty: no metadata of this id
    int64_t name_id = -1;  // PlaneVisitor::StatId(name): one id per name
  };
  explicit StatNames(const xplane::PlaneVisitor& plane);
  // nullptr when the plane has no stat metadata of this id.
  const Entry* Find(int64_t id) const {
    if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) {
      const Entry& entry = dense_[static_cast<size_t>(id)];
      return entry.escaped.empty() ? nullptr : &entry;
    }
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }

 private:
  std::vector<Entry> dense_;  // Ids below a few times the count (the usual).
  absl::flat_hash_map<int64_t, Entry> sparse_;
};

// A plane's event names (display_name, else name), each escaped once, by
// event metadata id.
class EventNames {
 public:
  explicit EventNames(const xplane::PlaneVisitor& plane);
  // The escaped name of metadata `id`; "\"\"" when the plane has none.
  std::string_view Find(int64_t id) const {
    if (id >= 0 && static_cast<uint64_t>(id) < dense_.size()) {
      const std::string& name = dense_[static_cast<size_t>(id)];
      return name.empty() ? std::string_view("\"\"") : std::string_view(name);
    }
    auto it = sparse_.find(id);
    return it == sparse_.end() ? std::string_view("\"\"") : std::string_view(it->second);
  }

 private:
  std::vector<std::string> dense_;
  absl::flat_hash_map<int64_t, std::string> sparse_;
};

// A stat's value as JSON: numbers (NaN and infinities as null), strings
// and interned strings (ref_value), bytes as "<N bytes>", else null.
void WriteStatValue(json::Writer* out, const xplane::StatVisitor& stat);
// The same with interned strings taken escaped from `names` (the plane's).
void WriteStatValue(json::Writer* out, const xplane::StatVisitor& stat, const StatNames& names);
// ,"<key>":<value> for a stat whose key (its metadata's entry) is known not
// to repeat a key already written: the writers' fast paths.
void WriteStatArg(json::Writer* out, const StatNames::Entry& key, const xplane::StatVisitor& stat,
                  const StatNames& names);

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
  void PassThrough(const xplane::EventVisitor& event, absl::Span<const std::string_view> skip);
  // The same with names from `names` (the event's plane's) and `skip` given
  // as StatNames::Entry::name_id (-1 entries skip nothing).
  void PassThrough(const xplane::EventVisitor& event, const StatNames& names,
                   absl::Span<const int64_t> skip);
  void Close();

 private:
  bool Seen(std::string_view key);

  json::Writer* out_;
  // A key's length and first bytes in one word: keys that differ there
  // (nearly all) are told apart without comparing their text.
  static uint64_t Print(std::string_view key);
  // Written so far: the first kIndexAt in arrays searched in order (no
  // allocation; pointers and sizes apart, so that no key is copied as one
  // 16-byte word right after being stored in halves, a stall); past them,
  // all in a hash set, so that an event with many stats is not quadratic
  // in them.
  static constexpr size_t kIndexAt = 16;
  size_t written_ = 0;
  std::array<uint64_t, kIndexAt> prints_;  // Print(key)
  std::array<const char*, kIndexAt> key_data_;
  std::array<size_t, kIndexAt> key_size_;
  absl::flat_hash_set<std::string_view> index_;
};

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_EVENT_STATS_H_
