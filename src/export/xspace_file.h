// Reading an .xplane.pb file: the one way every reader (the CLI's info,
// convert and summary) loads an XSpace from disk. What the file holds is
// untrusted: it may be a FIFO, a device, empty, huge or corrupt, and each of
// those is an error that names the file and what was wrong, never a hang or
// an unbounded read.
#ifndef NEURONPROF_SRC_EXPORT_XSPACE_FILE_H_
#define NEURONPROF_SRC_EXPORT_XSPACE_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace exporter {

// Protobuf cannot parse a message of 2 GiB or more, so a larger file can
// never be an XSpace we can read: refused before anything is read.
inline constexpr int64_t kMaxXSpaceFileBytes = (int64_t{1} << 31) - 1;

// The bytes of the regular file `path`, at most `max_bytes` of them.
// Opened with O_NONBLOCK (a FIFO cannot block the open) and checked with
// fstat: FIFOs, devices, sockets and directories are refused, as is a file
// larger than `max_bytes` (the error names the limit and `limit_reason`).
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes,
                                            const std::string& limit_reason);

// An XSpace from serialized bytes; `source` names them in errors. Empty
// input is refused ("empty file: not an XSpace"): every capture we write
// holds at least one plane, and an empty file is a failed write.
absl::StatusOr<tensorflow::profiler::XSpace> ParseXSpace(std::string_view data,
                                                         const std::string& source);

// ReadRegularFile(path, kMaxXSpaceFileBytes), then ParseXSpace.
absl::StatusOr<tensorflow::profiler::XSpace> ReadXSpaceFile(const std::string& path);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_XSPACE_FILE_H_
