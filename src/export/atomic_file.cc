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
#include "absl/strings/str_split.h"

namespace neuronprof {
namespace exporter {
namespace {

absl::Status ErrnoError(std::string_view what, const std::string& path, int err) {
  const std::string message =
      absl::StrCat(std::string(what), " '", path, "': ", std::strerror(err));
  if (err == EACCES || err == EPERM || err == EROFS) {
    return absl::PermissionDeniedError(message);
  }
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) {
    return absl::ResourceExhaustedError(message);
  }
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(message);
  if (err == ENAMETOOLONG) return absl::InvalidArgumentError(message);
  return absl::InternalError(message);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? absl::StrCat("/", name) : absl::StrCat(dir, "/", name);
}

absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  const char* cursor = data.data();
  size_t remaining = data.size();
  while (remaining > 0) {
    const ssize_t written = write(fd, cursor, remaining);
    if (written < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("cannot write", path, errno);
    }
    cursor += written;
    remaining -= static_cast<size_t>(written);
  }
  return absl::OkStatus();
}

// Opens the directory `name` inside `parent` without following a link.
absl::StatusOr<UniqueFd> OpenChildDirectory(int parent, const std::string& name,
                                            const std::string& path) {
  const int fd =
      openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return UniqueFd(fd);
  const int err = errno;
  struct stat info;
  if (fstatat(parent, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(info.st_mode)) {
      return absl::PermissionDeniedError(absl::StrCat(
          "'", path, "' is a symbolic link; profiles are only written through "
          "real directories, links are not followed"));
    }
    if (!S_ISDIR(info.st_mode)) {
      return absl::PermissionDeniedError(
          absl::StrCat("'", path, "' is not a directory"));
    }
  }
  return ErrnoError("cannot open directory", path, err);
}

}  // namespace

UniqueFd& UniqueFd::operator=(UniqueFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.Release();
  }
  return *this;
}

UniqueFd::~UniqueFd() {
  if (fd_ >= 0) close(fd_);
}

int UniqueFd::Release() {
  const int fd = fd_;
  fd_ = -1;
  return fd;
}

namespace {

absl::Status WritePiecesAtomicallyAt(int dir, const std::string& dir_path,
                                     const std::string& name,
                                     const std::vector<std::string_view>& pieces) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = JoinPath(dir_path, name);
  // Short and fixed-length, so a target name near NAME_MAX still works.
  const std::string temp =
      absl::StrCat(".neuronprof-", getpid(), "-", counter.fetch_add(1), ".tmp");
  const int fd = openat(dir, temp.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("cannot create a file next to", path, errno);
  absl::Status status;
  for (size_t i = 0; status.ok() && i < pieces.size(); ++i) {
    status = WriteAll(fd, pieces[i], path);
  }
  if (status.ok() && fsync(fd) != 0) status = ErrnoError("cannot flush", path, errno);
  if (close(fd) != 0 && status.ok()) status = ErrnoError("cannot flush", path, errno);
  if (status.ok() && renameat(dir, temp.c_str(), dir, name.c_str()) != 0) {
    status = ErrnoError("cannot rename onto", path, errno);
  }
  if (!status.ok()) {
    unlinkat(dir, temp.c_str(), 0);
    return status;
  }
  fsync(dir);  // Makes the rename itself durable.
  return absl::OkStatus();
}

}  // namespace

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::vector<std::string_view>& pieces) {
  const std::string dir_path = DirectoryOf(path);
  auto dir = OpenDirectory(dir_path);
  if (!dir.ok()) return dir.status();
  return WritePiecesAtomicallyAt(dir->get(), dir_path, path.substr(path.rfind('/') + 1),
                                 pieces);
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view data) {
  return WriteFileAtomically(path, std::vector<std::string_view>{data});
}

absl::Status WriteFileAtomicallyAt(int dir, const std::string& dir_path,
                                   const std::string& name, std::string_view data) {
  return WritePiecesAtomicallyAt(dir, dir_path, name, {data});
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

absl::StatusOr<UniqueFd> OpenDirectory(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open directory", path, errno);
  return UniqueFd(fd);
}

absl::StatusOr<UniqueFd> OpenDirectoryBelow(int root, const std::string& root_path,
                                            const std::string& relative,
                                            std::vector<std::string>* created) {
  UniqueFd current(fcntl(root, F_DUPFD_CLOEXEC, 0));
  if (!current.valid()) return ErrnoError("cannot open directory", root_path, errno);
  std::string path = root_path;
  std::string below;  // Relative to root, for *created.
  for (const absl::string_view part : absl::StrSplit(relative, '/')) {
    const std::string name(part);
    path = JoinPath(path, name);
    below = below.empty() ? name : absl::StrCat(below, "/", name);
    if (name.empty() || name == "." || name == "..") {
      return absl::InvalidArgumentError(
          absl::StrCat("'", path, "': empty, '.' and '..' components are refused"));
    }
    if (created != nullptr) {
      if (mkdirat(current.get(), name.c_str(), 0755) == 0) {
        created->push_back(below);
      } else if (errno != EEXIST) {
        return ErrnoError("cannot create directory", path, errno);
      }
    }
    auto child = OpenChildDirectory(current.get(), name, path);
    if (!child.ok()) return child.status();
    current = std::move(*child);
  }
  return current;
}

void RemoveCreatedDirectories(int root, const std::vector<std::string>& created) {
  for (auto it = created.rbegin(); it != created.rend(); ++it) {
    // Through the same no-link walk: a folder swapped for a link meanwhile
    // leads nowhere outside.
    const size_t slash = it->rfind('/');
    UniqueFd parent;
    if (slash == std::string::npos) {
      parent = UniqueFd(fcntl(root, F_DUPFD_CLOEXEC, 0));
    } else {
      auto opened = OpenDirectoryBelow(root, "", it->substr(0, slash), nullptr);
      if (!opened.ok()) continue;
      parent = std::move(*opened);
    }
    const std::string name = slash == std::string::npos ? *it : it->substr(slash + 1);
    unlinkat(parent.get(), name.c_str(), AT_REMOVEDIR);  // Only if empty.
  }
}

}  // namespace exporter
}  // namespace neuronprof
