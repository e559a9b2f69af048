// The worst shape of an XPlane metadata map for libprotobuf 3.21's parse
// (src/export/map_entries.h), as wire bytes no builder of ours would write.
#ifndef NEURONPROF_TESTS_EXPORT_MAP_CHURN_H_
#define NEURONPROF_TESTS_EXPORT_MAP_CHURN_H_

#include <cstdint>
#include <string>

namespace neuronprof {
namespace testing {

inline void AppendVarint(uint64_t value, std::string* out) {
  for (; value >= 0x80; value >>= 7) out->push_back(static_cast<char>(value | 0x80));
  out->push_back(static_cast<char>(value));
}

inline void AppendBytesField(int number, const std::string& bytes, std::string* out) {
  AppendVarint(static_cast<uint64_t>(number) << 3 | 2, out);
  AppendVarint(bytes.size(), out);
  out->append(bytes);
}

// The key all churning entries end on; the held keys are j << 48.
constexpr int64_t kChurnKey = int64_t{1} << 48;

// An XSpace of one plane whose stat_metadata holds `held` keys alike in
// their low 48 bits (one bucket of protobuf's table, whatever its seed),
// then `churn` entries "key i+1, value {id, name: churn_i}, key kChurnKey,
// value {description: d}": protobuf inserts each key i+1 and erases it,
// scanning from its bucket to the held one. The parse must end with the
// held keys, kChurnKey's metadata being the last churning entry's values
// merged: {id churn, name churn_<churn-1>, description d}.
inline std::string ChurningStatMetadata(int held, int churn) {
  std::string plane;
  for (int j = 1; j <= held; ++j) {
    std::string metadata = "\x08", entry = "\x08";
    AppendVarint(static_cast<uint64_t>(j) << 48, &metadata);
    AppendBytesField(2, "held_" + std::to_string(j), &metadata);
    AppendVarint(static_cast<uint64_t>(j) << 48, &entry);
    AppendBytesField(2, metadata, &entry);
    AppendBytesField(5, entry, &plane);
  }
  for (int i = 0; i < churn; ++i) {
    std::string metadata = "\x08", entry = "\x08";
    AppendVarint(static_cast<uint64_t>(i) + 1, &metadata);
    AppendBytesField(2, "churn_" + std::to_string(i), &metadata);
    AppendVarint(static_cast<uint64_t>(i) + 1, &entry);
    AppendBytesField(2, metadata, &entry);
    entry.push_back('\x08');
    AppendVarint(static_cast<uint64_t>(kChurnKey), &entry);
    AppendBytesField(2, "\x1a\x01" "d", &entry);
    AppendBytesField(5, entry, &plane);
  }
  std::string space;
  AppendBytesField(1, plane, &space);
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_MAP_CHURN_H_
