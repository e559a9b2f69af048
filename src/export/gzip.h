// gzip (RFC 1952) compression of whole buffers.
#ifndef NEURONPROF_SRC_EXPORT_GZIP_H_
#define NEURONPROF_SRC_EXPORT_GZIP_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace neuronprof {
namespace exporter {

// Compresses with zlib at `level` (1 = fastest .. 9 = smallest). Large
// inputs are split and compressed on several threads; the result is one
// valid gzip file (concatenated gzip members, which every gunzip reads).
absl::StatusOr<std::string> GzipCompress(std::string_view data, int level = 1);
absl::StatusOr<std::string> GzipDecompress(std::string_view data);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_GZIP_H_
