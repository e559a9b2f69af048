// What the capture client needs from a serialized ProfileResponse, read
// without building its XSpace: parsing 1M events costs about as much as the
// server's whole collection, and writing them back out as much again. The
// client writes the xspace field's bytes as they came (<host>.xplane.pb)
// and builds the XSpace only for the Chrome trace.
#ifndef NEURONPROF_SRC_RPC_RESPONSE_SCAN_H_
#define NEURONPROF_SRC_RPC_RESPONSE_SCAN_H_

#include <google/protobuf/io/zero_copy_stream.h>
#include <google/protobuf/message_lite.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "src/xplane/job_identity.h"

namespace neuronprof {
namespace rpc {

// Serialized bytes in pieces (gRPC's slices), read in order as one.
using BytePieces = std::vector<std::string_view>;

// The pieces as one ZeroCopyInputStream, without copying them; `pieces`
// must outlive it.
class PiecesStream final : public google::protobuf::io::ZeroCopyInputStream {
 public:
  explicit PiecesStream(const BytePieces& pieces);

  bool Next(const void** data, int* size) override;
  void BackUp(int count) override;
  bool Skip(int count) override;
  int64_t ByteCount() const override { return count_; }

 private:
  const BytePieces& pieces_;
  size_t index_ = 0;
  size_t used_ = 0;  // Bytes of pieces_[index_] handed out.
  int64_t count_ = 0;
};

struct ScannedResponse {
  // How many times the xspace field (8) occurs.
  int xspace_fields = 0;
  // The XSpace's bytes: several occurrences' in a row (protobuf merges
  // them so), pointing into the response's pieces; or, when a metadata map
  // entry would make protobuf's parse quadratic (exporter::
  // CanonicalMapEntries), the rewritten bytes, held by `rewritten`.
  BytePieces xspace;
  std::shared_ptr<const std::string> rewritten;
  // Of that XSpace: host names, warnings, events on all planes.
  std::vector<std::string> hostnames;
  std::vector<std::string> warnings;
  int64_t events = 0;
  // The rank identity of its Task Environment plane (rank 0 of 1 if none).
  xplane::JobIdentity identity;
  int planes = 0;
  // True when a line's timestamp_ns is an epoch time (TSL's spaces), not
  // one relative to profile_start_time (neuronprof's).
  bool epoch_line_times = false;
  // The first Task Environment plane without lines, parsed, and its field
  // (tag to end) within `xspace`; offset -1 when there is none.
  std::optional<tensorflow::profiler::XPlane> task_environment;
  int64_t task_environment_offset = -1;
  int64_t task_environment_size = 0;
};

// Scans `response` (a whole serialized ProfileResponse), checking every
// metadata map entry on the way. DataLoss names `source` when the bytes
// are not a well-formed response.
absl::StatusOr<ScannedResponse> ScanProfileResponse(const BytePieces& response,
                                                    const std::string& source);

// The XSpace's bytes with its Task Environment plane replaced by `plane`
// in place (appended when it has none), without copying the rest: the
// pieces point into `scanned.xspace` and `storage`, which hold the bytes.
BytePieces ReplaceTaskEnvironment(const ScannedResponse& scanned,
                                  const tensorflow::profiler::XPlane& plane, std::string* storage);

// Parses `pieces` into `message` (cleared first); false if they are not one.
// Protobuf's own parse: an XSpace or XPlane only from bytes whose map
// entries are checked (ScannedResponse::xspace), never a peer's as they came.
bool ParsePieces(const BytePieces& pieces, google::protobuf::MessageLite* message);

// The pieces of `pieces` covering bytes [offset, offset + size).
BytePieces SubPieces(const BytePieces& pieces, int64_t offset, int64_t size);

}  // namespace rpc
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_RPC_RESPONSE_SCAN_H_
