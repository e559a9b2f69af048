#include "src/export/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace exporter {
namespace {

absl::Status ErrnoError(std::string_view what, const std::string& path, int err) {
  const std::string message =
      absl::StrCat(std::string(what), " '", path, "': ", std::strerror(err));
  if (err == EACCES || err == EPERM || err == EROFS) {
    return absl::PermissionDeniedError(message);
  }
  if (err == ENOSPC || err == EDQUOT) return absl::ResourceExhaustedError(message);
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  return absl::InternalError(message);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path, std::string_view data) {
  static std::atomic<uint64_t> counter{0};
  const std::string temp = absl::StrCat(
      DirectoryOf(path), "/.", path.substr(path.rfind('/') + 1), ".tmp.",
      getpid(), ".", counter.fetch_add(1));
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create", temp, errno);
  const char* cursor = data.data();
  size_t remaining = data.size();
  while (remaining > 0) {
    const ssize_t written = write(fd, cursor, remaining);
    if (written < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      unlink(temp.c_str());
      return ErrnoError("cannot write", temp, err);
    }
    cursor += written;
    remaining -= static_cast<size_t>(written);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return ErrnoError("cannot flush", temp, err);
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    return ErrnoError("cannot rename onto", path, err);
  }
  // Make the rename itself durable.
  const int dir = open(DirectoryOf(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    fsync(dir);
    close(dir);
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  std::string data;
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      close(fd);
      return ErrnoError("cannot read", path, err);
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
  return data;
}

absl::Status MakeDirectories(const std::string& path) {
  std::string prefix;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    prefix = path.substr(0, pos);
    if (prefix.empty()) continue;
    if (mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError("cannot create directory", prefix, errno);
    }
    struct stat info;
    if (stat(prefix.c_str(), &info) != 0) {
      return ErrnoError("cannot create directory", prefix, errno);
    }
    if (!S_ISDIR(info.st_mode)) {
      return ErrnoError("cannot create directory", prefix, ENOTDIR);
    }
  }
  return absl::OkStatus();
}

void RemoveTree(const std::string& path) {
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
}

}  // namespace exporter
}  // namespace neuronprof
