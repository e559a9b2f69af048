// Whole-file writes that never leave a partial file under the final name:
// data goes to a temporary file in the same directory, is flushed to disk,
// then renamed over the target.
#ifndef NEURONPROF_SRC_EXPORT_ATOMIC_FILE_H_
#define NEURONPROF_SRC_EXPORT_ATOMIC_FILE_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace neuronprof {
namespace exporter {

absl::Status WriteFileAtomically(const std::string& path, std::string_view data);
absl::StatusOr<std::string> ReadFile(const std::string& path);
// mkdir -p; the error names the first directory that could not be made.
absl::Status MakeDirectories(const std::string& path);
// rm -r for a directory this library created.
void RemoveTree(const std::string& path);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_ATOMIC_FILE_H_
