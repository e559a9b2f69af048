// The one walk over a serialized message's fields for the capture client's
// readers of response bytes (response_scan, space_fragments): each field
// with the position of its tag, read as protobuf reads it (a tag or length
// may take more bytes than its value needs; fields come in any order).
#ifndef NEURONPROF_SRC_RPC_WIRE_FIELDS_H_
#define NEURONPROF_SRC_RPC_WIRE_FIELDS_H_

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <cstdint>

namespace neuronprof {
namespace rpc {

// The tag of length-delimited field `field` (messages, strings, bytes).
constexpr uint32_t LengthDelimitedTag(int field) {
  using google::protobuf::internal::WireFormatLite;
  return WireFormatLite::MakeTag(field, WireFormatLite::WIRETYPE_LENGTH_DELIMITED);
}

// Calls on_field(tag, position of its tag) for each field of the message
// body of `size` bytes at the stream's position; on_field must consume the
// field (and return false to stop). False if the body is malformed.
template <typename OnField>
bool ReadFields(google::protobuf::io::CodedInputStream& in, uint32_t size, OnField on_field) {
  if (size > INT_MAX) return false;
  const auto limit = in.PushLimit(static_cast<int>(size));
  bool ok = true;
  while (ok) {
    const int64_t start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;  // The body's end, or a zero tag (malformed) before it.
    ok = on_field(tag, start);
  }
  ok = ok && in.BytesUntilLimit() == 0;
  in.PopLimit(limit);
  return ok;
}

// The same for a length-delimited field whose tag was read: its length,
// then the body.
template <typename OnField>
bool ReadMessageFields(google::protobuf::io::CodedInputStream& in, OnField on_field) {
  uint32_t size = 0;
  return in.ReadVarint32(&size) && ReadFields(in, size, on_field);
}

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_WIRE_FIELDS_H_
