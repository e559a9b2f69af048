#include "src/export/xspace_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "src/export/map_entry_rewrite.h"

namespace neuronprof {
namespace exporter {
namespace {

// Closes the descriptor on every path out.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

absl::Status OpenError(const std::string& path, int err) {
  const std::string message = absl::StrCat("cannot open '", path, "': ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(message);
  return absl::InvalidArgumentError(message);
}

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, int64_t max_bytes,
                                            const std::string& limit_reason) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  const FileDescriptor fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) return OpenError(path, errno);
  struct stat info;
  if (fstat(fd.get(), &info) != 0) {
    return absl::InternalError(absl::StrCat("cannot stat '", path, "': ", std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", path, "' is ", KindOf(info.st_mode), ", not a regular file"));
  }
  if (info.st_size > max_bytes) {
    return absl::InvalidArgumentError(absl::StrCat("'", path, "' holds ", info.st_size,
                                                   " bytes, over the limit of ", max_bytes,
                                                   " bytes (", limit_reason, ")"));
  }
  // Read what fstat saw, no more: a file that grows meanwhile stays bounded.
  std::string data(static_cast<size_t>(info.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = read(fd.get(), data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::DataLossError(absl::StrCat("cannot read '", path, "': ", std::strerror(errno)));
    }
    if (n == 0) break;  // Shrank meanwhile: parse what is there.
    done += static_cast<size_t>(n);
  }
  data.resize(done);
  return data;
}

absl::StatusOr<tensorflow::profiler::XSpace> ParseXSpace(std::string_view data,
                                                         const std::string& source) {
  if (data.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("'", source, "': empty file: not an XSpace"));
  }
  // Protobuf's parse is quadratic on some map entries: rewritten first.
  const auto canonical = CanonicalMapEntries(data);
  const std::string_view bytes =
      canonical.ok() && canonical->has_value() ? std::string_view(**canonical) : data;
  tensorflow::profiler::XSpace space;
  if (!canonical.ok() || bytes.size() > static_cast<size_t>(kMaxXSpaceFileBytes) ||
      !space.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError(
        absl::StrCat("'", source, "' is not an XSpace (.xplane.pb) file: its ", data.size(),
                     " bytes do not parse (truncated or "
                     "not a profile)"));
  }
  return space;
}

absl::StatusOr<tensorflow::profiler::XSpace> ReadXSpaceFile(const std::string& path) {
  auto data = ReadRegularFile(path, kMaxXSpaceFileBytes,
                              "protobuf cannot parse an XSpace of 2 GiB or more");
  if (!data.ok()) return data.status();
  return ParseXSpace(*data, path);
}

}  // namespace exporter
}  // namespace neuronprof
