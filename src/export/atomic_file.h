// Whole-file writes that never leave a partial file under the final name:
// data goes to a temporary file in the same directory, is flushed to disk,
// then renamed over the target. Writes relative to an open directory
// (WriteFileAtomicallyAt) never leave that directory, whatever other
// processes do to the path meanwhile.
#ifndef NEURONPROF_SRC_EXPORT_ATOMIC_FILE_H_
#define NEURONPROF_SRC_EXPORT_ATOMIC_FILE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/export/json_text.h"

namespace neuronprof {
namespace exporter {

// A file descriptor this code owns; closed on destruction.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.Release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept;
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd();

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int Release();

 private:
  int fd_ = -1;
};

// A file written in pieces that appears under its name only once complete:
// the bytes go to a temporary file in the same directory (created with
// O_EXCL|O_NOFOLLOW), which Commit() fsyncs and renames onto the name.
// Destroyed without a successful Commit(), the temporary file is removed,
// so a failed write leaves nothing new behind. Errors name the final path
// and the errno text.
class AtomicFile : public ByteSink {
 public:
  // What Commit() does when the name exists: replace it, or leave it as it
  // is and fail with AlreadyExists naming it (decided atomically by the
  // file system, so two writers cannot both win).
  enum class Existing { kReplace, kRefuse };

  // The directory part of `path` is opened as given (links followed: it is
  // the caller's own folder).
  static absl::StatusOr<AtomicFile> Open(const std::string& path);
  // `name` (a plain file name) inside the open directory `dir`, never
  // leaving it whatever other processes do to the path meanwhile.
  // `dir_path` is only for messages.
  static absl::StatusOr<AtomicFile> OpenAt(int dir, const std::string& dir_path,
                                           const std::string& name,
                                           Existing existing = Existing::kReplace);
  AtomicFile(AtomicFile&&) = default;
  AtomicFile& operator=(AtomicFile&&) = delete;
  ~AtomicFile() override;

  absl::Status Append(std::string_view bytes) override;
  // Replaces bytes appended earlier at `offset` (a length that was not
  // known when its place was written); the end of the file stays.
  absl::Status Overwrite(uint64_t offset, std::string_view bytes);
  // fsync, rename onto the name, fsync the directory. Once only.
  absl::Status Commit();

 private:
  AtomicFile(UniqueFd dir, UniqueFd file, std::string temp, std::string name, std::string path,
             Existing existing);
  // The temporary file onto the name, as existing_ says.
  absl::Status Place();

  UniqueFd dir_;
  UniqueFd file_;
  std::string temp_;  // Name of the temporary file in dir_; "" once renamed.
  std::string name_;
  std::string path_;  // For messages.
  Existing existing_;
  absl::Status status_;
  uint64_t written_ = 0;   // Bytes appended.
  uint64_t flushing_ = 0;  // Bytes whose write-back was started.
};

// Writes `path` atomically; the directory part of `path` is opened as
// given (links followed: it is the caller's own folder).
absl::Status WriteFileAtomically(const std::string& path, std::string_view data);
// The same with the data in pieces (e.g. gRPC's slices), written in order:
// no whole copy of them is made.
absl::Status WriteFileAtomically(const std::string& path,
                                 const std::vector<std::string_view>& pieces);
// Writes `name` (a plain file name) atomically inside the open directory
// `dir` (AtomicFile::OpenAt, written whole, committed). An existing `name`
// is never replaced: AlreadyExists naming it, and nothing written.
absl::Status WriteFileAtomicallyAt(int dir, const std::string& dir_path, const std::string& name,
                                   std::string_view data);

absl::StatusOr<std::string> ReadFile(const std::string& path);
// mkdir -p; the error names the first directory that could not be made.
absl::Status MakeDirectories(const std::string& path);
// rm -r for a directory this library created.
void RemoveTree(const std::string& path);

// Opens the existing directory `path` (links in it followed: the caller
// trusts it) for use with the *At functions.
absl::StatusOr<UniqueFd> OpenDirectory(const std::string& path);

// Opens `relative` ("a/b/c": no "", "." or ".." components, not absolute)
// below the open directory `root`, one component at a time, creating the
// missing ones (0755) and never following a symbolic link: a link (or a
// non-directory) at any component is refused with PermissionDenied naming
// it. The directories it created are appended to *created, parents first
// (relative to `root`), for RemoveCreatedDirectories; with created ==
// nullptr nothing is created. `root_path` is only for messages.
absl::StatusOr<UniqueFd> OpenDirectoryBelow(int root, const std::string& root_path,
                                            const std::string& relative,
                                            std::vector<std::string>* created);
// Removes the directories in `created` (as filled by OpenDirectoryBelow)
// below `root`, deepest first, as long as they are empty.
void RemoveCreatedDirectories(int root, const std::vector<std::string>& created);

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_ATOMIC_FILE_H_
