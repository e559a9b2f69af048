#include "src/export/map_entry_rewrite.h"

#include <cstdint>

namespace neuronprof {
namespace exporter {
namespace {

constexpr uint32_t kPlanesField = 1;         // XSpace.planes
constexpr uint32_t kEventMetadataField = 4;  // XPlane.event_metadata
constexpr uint32_t kStatMetadataField = 5;   // XPlane.stat_metadata
// A map entry's key (int64) and value (a message), as protobuf writes them.
constexpr char kKeyTag = 0x08;
constexpr char kValueTag = 0x12;

enum WireType {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};
// Protobuf's default recursion limit: deeper groups do not parse anyway.
constexpr int kMaxGroupDepth = 100;

struct Field {
  uint32_t number = 0;
  int wire_type = 0;
  uint64_t varint = 0;       // a varint field's value
  std::string_view payload;  // a length-delimited field's bytes
  std::string_view whole;    // the field, tag included
};

// Protobuf wire format, field by field; false on malformed bytes.
class WireReader {
 public:
  explicit WireReader(std::string_view data) : data_(data) {}
  bool AtEnd() const { return pos_ == data_.size(); }

  bool Next(Field* field) {
    const size_t start = pos_;
    if (!ReadTag(field) || !ReadValue(field->number, field->wire_type, 0, field)) return false;
    field->whole = data_.substr(start, pos_ - start);
    return true;
  }

 private:
  bool ReadVarint(uint64_t* value) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {  // at most 10 bytes
      if (pos_ == data_.size()) return false;
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      result |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  bool ReadTag(Field* field) {
    uint64_t tag = 0;
    if (!ReadVarint(&tag) || tag > UINT32_MAX || (tag >> 3) == 0) return false;
    field->number = static_cast<uint32_t>(tag >> 3);
    field->wire_type = static_cast<int>(tag & 7);
    return true;
  }

  bool Skip(uint64_t bytes) {
    if (bytes > data_.size() - pos_) return false;
    pos_ += static_cast<size_t>(bytes);
    return true;
  }

  bool ReadValue(uint32_t number, int wire_type, int depth, Field* field) {
    switch (wire_type) {
      case kVarint:
        return ReadVarint(&field->varint);
      case kFixed64:
        return Skip(8);
      case kFixed32:
        return Skip(4);
      case kLengthDelimited: {
        uint64_t size = 0;
        if (!ReadVarint(&size) || !Skip(size)) return false;
        field->payload = data_.substr(pos_ - static_cast<size_t>(size), static_cast<size_t>(size));
        return true;
      }
      case kStartGroup:
        return SkipGroup(number, depth + 1);
      default:  // an end-group without its start, or no wire type at all
        return false;
    }
  }

  bool SkipGroup(uint32_t number, int depth) {
    if (depth > kMaxGroupDepth) return false;
    Field inner;
    while (ReadTag(&inner)) {
      if (inner.wire_type == kEndGroup) return inner.number == number;
      if (!ReadValue(inner.number, inner.wire_type, depth, &inner)) return false;
    }
    return false;
  }

  std::string_view data_;
  size_t pos_ = 0;
};

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

void AppendLengthDelimited(uint32_t number, std::string_view payload, std::string* out) {
  AppendVarint(uint64_t{number} << 3 | kLengthDelimited, out);
  AppendVarint(payload.size(), out);
  out->append(payload);
}

bool IsKey(const Field& field) { return field.number == 1 && field.wire_type == kVarint; }
bool IsValue(const Field& field) {
  return field.number == 2 && field.wire_type == kLengthDelimited;
}

// One map entry. Protobuf inserts and then erases the key of an entry that
// starts with the key's tag byte, then the value's, and goes on: those are
// rewritten as key (the last one), value (all values' bytes); others kept.
// `out` nullptr: only sets *changed.
bool RewriteEntry(std::string_view entry, std::string* out, bool* changed) {
  WireReader reader(entry);
  Field field;
  int fields = 0;
  bool key_then_value = false;
  uint64_t key = 0;
  uint64_t value_bytes = 0;
  while (!reader.AtEnd()) {
    if (!reader.Next(&field)) return false;
    if (fields == 0) key_then_value = field.whole[0] == kKeyTag;
    if (fields == 1) key_then_value = key_then_value && field.whole[0] == kValueTag;
    ++fields;
    if (IsKey(field)) key = field.varint;
    if (IsValue(field)) value_bytes += field.payload.size();
  }
  if (!key_then_value || fields <= 2) return true;
  *changed = true;
  if (out == nullptr) return true;
  out->push_back(kKeyTag);
  AppendVarint(key, out);
  out->push_back(kValueTag);
  AppendVarint(value_bytes, out);
  WireReader values(entry);
  while (!values.AtEnd() && values.Next(&field)) {
    if (IsValue(field)) out->append(field.payload);
  }
  return true;
}

using Rewrite = bool (*)(std::string_view, std::string*, bool*);

// Copies the message `data` to `out` (nullptr: only checks), passing each
// length-delimited field numbered `first` or `second` through `rewrite`.
bool RewriteFields(std::string_view data, uint32_t first, uint32_t second, Rewrite rewrite,
                   std::string* out, bool* changed) {
  WireReader reader(data);
  Field field;
  while (!reader.AtEnd()) {
    if (!reader.Next(&field)) return false;
    bool field_changed = false;
    if (field.wire_type == kLengthDelimited && (field.number == first || field.number == second) &&
        !rewrite(field.payload, nullptr, &field_changed)) {
      return false;
    }
    if (field_changed) *changed = true;
    if (out == nullptr) continue;
    if (!field_changed) {
      out->append(field.whole);
      continue;
    }
    std::string payload;
    rewrite(field.payload, &payload, &field_changed);
    AppendLengthDelimited(field.number, payload, out);
  }
  return true;
}

bool RewritePlane(std::string_view plane, std::string* out, bool* changed) {
  return RewriteFields(plane, kEventMetadataField, kStatMetadataField, RewriteEntry, out, changed);
}

}  // namespace

bool MapEntryNeedsRewrite(std::string_view entry) {
  bool changed = false;
  return !RewriteEntry(entry, nullptr, &changed) || changed;
}

absl::StatusOr<std::optional<std::string>> CanonicalMapEntries(std::string_view data) {
  bool changed = false;
  if (!RewriteFields(data, kPlanesField, kPlanesField, RewritePlane, nullptr, &changed)) {
    return absl::DataLossError("not well-formed protobuf wire format");
  }
  if (!changed) return std::nullopt;
  std::string out;
  out.reserve(data.size());
  RewriteFields(data, kPlanesField, kPlanesField, RewritePlane, &out, &changed);
  return out;
}

}  // namespace exporter
}  // namespace neuronprof
