// The worst shape of an XPlane metadata map for libprotobuf 3.21's parse
// (src/export/map_entry_rewrite.h), as wire bytes no builder of ours would write,
// alone and in a capture; and a count of such entries in any bytes.
#ifndef NEURONPROF_TESTS_EXPORT_MAP_CHURN_H_
#define NEURONPROF_TESTS_EXPORT_MAP_CHURN_H_

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message_lite.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/xplane/job_identity.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

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
inline std::string ChurningStatMetadata(int held, int churn);

// Those stat_metadata entries alone: bytes to append to any XPlane's.
inline std::string ChurningStatEntries(int held, int churn) {
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
    AppendBytesField(2,
                     "\x1a\x01"
                     "d",
                     &entry);
    AppendBytesField(5, entry, &plane);
  }
  return plane;
}

inline std::string ChurningStatMetadata(int held, int churn) {
  std::string space;
  AppendBytesField(1, ChurningStatEntries(held, churn), &space);
  return space;
}

// A capture as a hostile server might send it, as XSpace bytes: a host
// plane (one event whose one stat's metadata is kChurnKey) and a Task
// Environment plane (rank 1 of 2), each followed by ChurningStatEntries
// (held, churn); host name "crafted". Parsed, the event's stat is named
// "churn_<churn-1>".
inline std::string ChurningCaptureSpace(int held, int churn) {
  tensorflow::profiler::XSpace space;
  xplane::SetProfileTimes(&space, 1'000'000, 2'000'000);
  xplane::JobIdentity identity;
  identity.rank = 1;
  identity.world_size = 2;
  xplane::AddJobIdentity(identity, &space);
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* line = host.AddLine(1, "main", 1000);
  auto* stat = host.AddEvent(line, host.EventMetadataId("crafted_marker"), 0, 5000)->add_stats();
  stat->set_metadata_id(kChurnKey);
  stat->set_int64_value(7);
  std::string bytes;
  for (const auto& plane : space.planes()) {
    AppendBytesField(1, plane.SerializeAsString() + ChurningStatEntries(held, churn), &bytes);
  }
  AppendBytesField(4, "crafted", &bytes);
  return bytes;
}

// Calls `f` with the bytes of each length-delimited field numbered `a` or
// `b` of the message `data`, read with protobuf's own CodedInputStream;
// false if `data` is not wire format.
template <typename F>
bool ForEachField(std::string_view data, int a, int b, F&& f) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()),
                                            static_cast<int>(data.size()));
  while (const uint32_t tag = in.ReadTag()) {
    const int number = WireFormatLite::GetTagFieldNumber(tag);
    if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED &&
        (number == a || number == b)) {
      uint32_t size = 0;
      std::string bytes;
      if (!in.ReadVarint32(&size) || !in.ReadString(&bytes, static_cast<int>(size))) return false;
      f(bytes);
      continue;
    }
    if (!WireFormatLite::SkipField(&in, tag)) return false;
  }
  return in.ConsumedEntireMessage();
}

// The metadata map entries of the XSpace bytes `space` that protobuf 3.21
// inserts and then erases (a table scan each): the key's tag byte, a key,
// the value's tag byte, a value, more. Protobuf's work on the other entries
// is one insert each. -1 if `space` is not wire format.
inline int ChurningEntries(std::string_view space) {
  int churning = 0;
  const bool read = ForEachField(space, 1, 1, [&](const std::string& plane) {
    ForEachField(plane, 4, 5, [&](const std::string& entry) {
      google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(entry.data()),
                                                static_cast<int>(entry.size()));
      uint64_t key = 0;
      uint32_t size = 0;
      if (entry.empty() || entry[0] != '\x08' || !in.Skip(1) || !in.ReadVarint64(&key)) return;
      const int at = in.CurrentPosition();
      if (at >= static_cast<int>(entry.size()) || entry[at] != '\x12') return;
      if (!in.Skip(1) || !in.ReadVarint32(&size) || !in.Skip(static_cast<int>(size))) return;
      if (in.CurrentPosition() < static_cast<int>(entry.size())) ++churning;
    });
  });
  return read ? churning : -1;
}

// `message` serialized with map entries in key order, so equal messages
// give equal bytes (for comparing what two parses made).
inline std::string DeterministicBytes(const google::protobuf::MessageLite& message) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  google::protobuf::io::CodedOutputStream out(&stream);
  out.SetSerializationDeterministic(true);
  message.SerializeToCodedStream(&out);
  out.Trim();
  return bytes;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_MAP_CHURN_H_
