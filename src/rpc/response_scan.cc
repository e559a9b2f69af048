// A ProfileResponse read field by field: three levels of length-delimited
// messages (response > XSpace > XPlane > XLine), events counted and skipped.
#include "src/rpc/response_scan.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <climits>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "proto/xplane.pb.h"
#include "src/export/map_entry_rewrite.h"
#include "src/rpc/wire_fields.h"
#include "src/xplane/clock_offset.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace rpc {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// An XLine field: events (4) counted, an epoch timestamp_ns (3) noted.
bool ScanLineField(CodedInputStream& in, uint32_t tag, ScannedResponse* out) {
  if (tag == WireFormatLite::MakeTag(3, WireFormatLite::WIRETYPE_VARINT)) {
    uint64_t timestamp_ns = 0;
    if (!in.ReadVarint64(&timestamp_ns)) return false;
    if (static_cast<int64_t>(timestamp_ns) >= xplane::kEpochLineTimeNs) {
      out->epoch_line_times = true;
    }
    return true;
  }
  if (tag != LengthDelimitedTag(4)) return WireFormatLite::SkipField(&in, tag);
  uint32_t size = 0;
  ++out->events;
  return in.ReadVarint32(&size) && in.Skip(static_cast<int>(size));
}

// A metadata map entry (XPlane field 4 or 5), read in place where it lies
// in one piece (else into `scratch`): *rewrite set when protobuf must not
// parse it as it is (exporter::MapEntryNeedsRewrite).
bool ScanMapEntry(CodedInputStream& in, std::string* scratch, bool* rewrite) {
  uint32_t size = 0;
  if (!in.ReadVarint32(&size) || size > INT_MAX) return false;
  const void* data = nullptr;
  int available = 0;
  std::string_view entry;
  if (in.GetDirectBufferPointer(&data, &available) && static_cast<uint32_t>(available) >= size) {
    entry = std::string_view(static_cast<const char*>(data), size);
    if (!in.Skip(static_cast<int>(size))) return false;
  } else {
    if (!in.ReadString(scratch, static_cast<int>(size))) return false;
    entry = *scratch;
  }
  if (exporter::MapEntryNeedsRewrite(entry)) *rewrite = true;
  return true;
}

// `response`: the whole response, for the bytes of the Task Environment
// plane (small: stats only), which alone is parsed, unless its map entries
// need rewriting first. *rewrite set when any plane's do.
bool ScanXSpace(CodedInputStream& in, uint32_t size, const BytePieces& response,
                ScannedResponse* out, bool* rewrite) {
  std::string scratch;
  return ReadFields(in, size, [&](uint32_t tag, int64_t field_start) {
    switch (tag) {
      case LengthDelimitedTag(1): {  // planes
        ++out->planes;
        uint32_t plane_size = 0;
        if (!in.ReadVarint32(&plane_size)) return false;
        const int64_t plane_start = in.CurrentPosition();
        std::string name;
        bool has_lines = false;
        bool rewrite_plane = false;
        const bool read = ReadFields(in, plane_size, [&](uint32_t plane_tag, int64_t) {
          if (plane_tag == LengthDelimitedTag(2)) return WireFormatLite::ReadString(&in, &name);
          if (plane_tag == LengthDelimitedTag(4) || plane_tag == LengthDelimitedTag(5)) {
            return ScanMapEntry(in, &scratch, &rewrite_plane);  // event/stat metadata
          }
          if (plane_tag != LengthDelimitedTag(3)) return WireFormatLite::SkipField(&in, plane_tag);
          has_lines = true;
          return ReadMessageFields(in, [&](uint32_t line_tag, int64_t) {  // events: field 4
            return ScanLineField(in, line_tag, out);
          });
        });
        if (rewrite_plane) *rewrite = true;
        if (read && !rewrite_plane && !has_lines && name == xplane::kTaskEnvironmentPlaneName &&
            out->task_environment_offset < 0) {
          tensorflow::profiler::XPlane plane;
          if (ParsePieces(SubPieces(response, plane_start, plane_size), &plane)) {
            out->identity = xplane::ReadJobIdentity(plane);
            out->task_environment = std::move(plane);
            // Made relative to the XSpace's bytes by the caller.
            out->task_environment_offset = field_start;
            out->task_environment_size = plane_start + plane_size - field_start;
          }
        }
        return read;
      }
      case LengthDelimitedTag(3):  // warnings
        return WireFormatLite::ReadString(&in, &out->warnings.emplace_back());
      case LengthDelimitedTag(4):  // hostnames
        return WireFormatLite::ReadString(&in, &out->hostnames.emplace_back());
      default:
        return WireFormatLite::SkipField(&in, tag);
    }
  });
}

absl::Status NotAResponse(const std::string& source) {
  return absl::DataLossError(absl::StrCat(source,
                                          " sent a Profile response that is not a "
                                          "well-formed tensorflow.ProfileResponse"));
}

// The XSpace of `xspace_fields` fields whose bytes are `xspace`, scanned as
// one (protobuf merges the fields: their bytes in a row), its map entries
// that protobuf would insert and erase rewritten first, by the file
// reader's exporter::CanonicalMapEntries (a copy, made only then).
absl::StatusOr<ScannedResponse> ScanWholeSpace(BytePieces xspace, int xspace_fields, bool rewrite,
                                               const std::string& source) {
  ScannedResponse whole;
  whole.xspace_fields = xspace_fields;
  whole.xspace = std::move(xspace);
  if (rewrite) {
    std::string bytes;
    for (std::string_view piece : whole.xspace) bytes.append(piece);
    auto canonical = exporter::CanonicalMapEntries(bytes);
    if (!canonical.ok()) return NotAResponse(source);
    if (canonical->has_value()) {
      whole.rewritten = std::make_shared<const std::string>(std::move(**canonical));
      whole.xspace = {*whole.rewritten};
    }
  }
  int64_t size = 0;
  for (std::string_view piece : whole.xspace) size += static_cast<int64_t>(piece.size());
  if (size > INT_MAX) return NotAResponse(source);
  PiecesStream stream(whole.xspace);
  CodedInputStream in(&stream);
  bool again = false;  // Never, once rewritten: protobuf is not handed such an entry.
  if (!ScanXSpace(in, static_cast<uint32_t>(size), whole.xspace, &whole, &again) || again) {
    return NotAResponse(source);
  }
  return whole;
}

}  // namespace

PiecesStream::PiecesStream(const BytePieces& pieces) : pieces_(pieces) {}

bool PiecesStream::Next(const void** data, int* size) {
  while (index_ < pieces_.size() && used_ == pieces_[index_].size()) {
    ++index_;
    used_ = 0;
  }
  if (index_ == pieces_.size()) return false;
  const std::string_view rest = pieces_[index_].substr(used_);
  // A piece of 2 GiB or more is handed out in parts.
  const size_t part = std::min<size_t>(rest.size(), INT_MAX);
  *data = rest.data();
  *size = static_cast<int>(part);
  used_ += part;
  count_ += static_cast<int64_t>(part);
  return true;
}

void PiecesStream::BackUp(int count) {  // Only within the last Next.
  used_ -= static_cast<size_t>(count);
  count_ -= count;
}

bool PiecesStream::Skip(int count) {
  const void* data = nullptr;
  int size = 0;
  while (count > 0) {
    if (!Next(&data, &size)) return false;
    if (size > count) BackUp(size - count);
    count -= std::min(size, count);
  }
  return true;
}

BytePieces SubPieces(const BytePieces& pieces, int64_t offset, int64_t size) {
  BytePieces sub;
  for (std::string_view piece : pieces) {
    if (size <= 0) break;
    if (offset >= static_cast<int64_t>(piece.size())) {
      offset -= static_cast<int64_t>(piece.size());
      continue;
    }
    piece.remove_prefix(static_cast<size_t>(offset));
    offset = 0;
    if (static_cast<int64_t>(piece.size()) > size) piece = piece.substr(0, size);
    sub.push_back(piece);
    size -= static_cast<int64_t>(piece.size());
  }
  return sub;
}

absl::StatusOr<ScannedResponse> ScanProfileResponse(const BytePieces& response,
                                                    const std::string& source) {
  PiecesStream stream(response);
  CodedInputStream in(&stream);
  ScannedResponse scanned;  // Of the first xspace field.
  int fields = 0;
  BytePieces parts;  // Every xspace field's bytes, in a row.
  bool rewrite = false;
  bool ok = true;
  while (ok) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) {
      ok = in.ConsumedEntireMessage();  // False for a zero tag before the end.
      break;
    }
    if (tag != LengthDelimitedTag(8)) {
      ok = WireFormatLite::SkipField(&in, tag);
      continue;
    }
    ++fields;
    uint32_t size = 0;
    ok = in.ReadVarint32(&size);
    if (!ok) break;
    const int64_t start = in.CurrentPosition();
    ScannedResponse space;
    ok = ScanXSpace(in, size, response, &space, &rewrite);
    for (std::string_view piece : SubPieces(response, start, size)) parts.push_back(piece);
    if (fields > 1) continue;
    scanned = std::move(space);
    if (scanned.task_environment_offset >= 0) scanned.task_environment_offset -= start;
  }
  if (!ok) return NotAResponse(source);
  if (fields > 1 || rewrite) return ScanWholeSpace(std::move(parts), fields, rewrite, source);
  scanned.xspace_fields = fields;
  scanned.xspace = std::move(parts);  // As it came: no copy.
  return scanned;
}

bool ParsePieces(const BytePieces& pieces, google::protobuf::MessageLite* message) {
  PiecesStream stream(pieces);
  return message->ParseFromZeroCopyStream(&stream);
}

BytePieces ReplaceTaskEnvironment(const ScannedResponse& scanned,
                                  const tensorflow::profiler::XPlane& plane, std::string* storage) {
  tensorflow::profiler::XSpace holder;
  *holder.add_planes() = plane;
  *storage = holder.SerializeAsString();  // Field 1, as in the XSpace.
  int64_t total = 0;
  for (std::string_view piece : scanned.xspace) total += static_cast<int64_t>(piece.size());
  if (scanned.task_environment_offset < 0) {
    BytePieces pieces = scanned.xspace;
    pieces.push_back(*storage);
    return pieces;
  }
  const int64_t end = scanned.task_environment_offset + scanned.task_environment_size;
  BytePieces pieces = SubPieces(scanned.xspace, 0, scanned.task_environment_offset);
  pieces.push_back(*storage);
  for (std::string_view piece : SubPieces(scanned.xspace, end, total - end)) {
    pieces.push_back(piece);
  }
  return pieces;
}

}  // namespace rpc
}  // namespace neuronprof
