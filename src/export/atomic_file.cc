#include "src/export/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE (glibc 2.28).
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
  const int fd = openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0) return UniqueFd(fd);
  const int err = errno;
  struct stat info;
  if (fstatat(parent, name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0) {
    if (S_ISLNK(info.st_mode)) {
      return absl::PermissionDeniedError(
          absl::StrCat("'", path,
                       "' is a symbolic link; profiles are only written through "
                       "real directories, links are not followed"));
    }
    if (!S_ISDIR(info.st_mode)) {
      return absl::PermissionDeniedError(absl::StrCat("'", path, "' is not a directory"));
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

AtomicFile::AtomicFile(UniqueFd dir, UniqueFd file, std::string temp, std::string name,
                       std::string path, Existing existing)
    : dir_(std::move(dir)),
      file_(std::move(file)),
      temp_(std::move(temp)),
      name_(std::move(name)),
      path_(std::move(path)),
      existing_(existing) {}

absl::StatusOr<AtomicFile> AtomicFile::Open(const std::string& path) {
  const std::string dir_path = DirectoryOf(path);
  auto dir = OpenDirectory(dir_path);
  if (!dir.ok()) return dir.status();
  return OpenAt(dir->get(), dir_path, path.substr(path.rfind('/') + 1));
}

absl::StatusOr<AtomicFile> AtomicFile::OpenAt(int dir, const std::string& dir_path,
                                              const std::string& name, Existing existing) {
  static std::atomic<uint64_t> counter{0};
  const std::string path = JoinPath(dir_path, name);
  UniqueFd own_dir(fcntl(dir, F_DUPFD_CLOEXEC, 0));
  if (!own_dir.valid()) return ErrnoError("cannot open directory", dir_path, errno);
  // Short and fixed-length, so a target name near NAME_MAX still works.
  std::string temp = absl::StrCat(".neuronprof-", getpid(), "-", counter.fetch_add(1), ".tmp");
  UniqueFd file(
      openat(dir, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
  if (!file.valid()) return ErrnoError("cannot create a file next to", path, errno);
  return AtomicFile(std::move(own_dir), std::move(file), std::move(temp), name, path, existing);
}

AtomicFile::~AtomicFile() {
  if (!temp_.empty() && dir_.valid()) unlinkat(dir_.get(), temp_.c_str(), 0);
}

absl::Status AtomicFile::Append(std::string_view bytes) {
  if (status_.ok() && !file_.valid())
    status_ = absl::FailedPreconditionError(absl::StrCat("'", path_, "' was already committed"));
  if (status_.ok()) status_ = WriteAll(file_.get(), bytes, path_);
  if (!status_.ok()) return status_;
  written_ += bytes.size();
  // The disk starts on what is written while the rest is made, so that
  // Commit's fsync, the last step of a large export, waits only for the
  // end. A hint: its errors show again at fsync.
  constexpr uint64_t kWriteBackBytes = uint64_t{8} << 20;
  if (written_ - flushing_ >= kWriteBackBytes) {
    sync_file_range(file_.get(), static_cast<off_t>(flushing_),
                    static_cast<off_t>(written_ - flushing_), SYNC_FILE_RANGE_WRITE);
    flushing_ = written_;
  }
  return status_;
}

absl::Status AtomicFile::Overwrite(uint64_t offset, std::string_view bytes) {
  if (status_.ok() && !file_.valid())
    status_ = absl::FailedPreconditionError(absl::StrCat("'", path_, "' was already committed"));
  size_t done = 0;
  while (status_.ok() && done < bytes.size()) {
    const ssize_t written = pwrite(file_.get(), bytes.data() + done, bytes.size() - done,
                                   static_cast<off_t>(offset + done));
    if (written < 0 && errno != EINTR) status_ = ErrnoError("cannot write", path_, errno);
    if (written == 0) status_ = ErrnoError("cannot write", path_, EIO);
    if (written > 0) done += static_cast<size_t>(written);
  }
  return status_;
}

absl::Status AtomicFile::Commit() {
  if (!status_.ok()) return status_;
  if (!file_.valid()) {
    return absl::FailedPreconditionError(absl::StrCat("'", path_, "' was already committed"));
  }
  if (fsync(file_.get()) != 0) status_ = ErrnoError("cannot flush", path_, errno);
  if (close(file_.Release()) != 0 && status_.ok()) {
    status_ = ErrnoError("cannot flush", path_, errno);
  }
  if (status_.ok()) status_ = Place();
  if (!status_.ok()) return status_;  // The destructor removes the temporary file.
  temp_.clear();
  fsync(dir_.get());  // Makes the rename itself durable.
  return absl::OkStatus();
}

absl::Status AtomicFile::Place() {
  if (existing_ == Existing::kReplace) {
    if (renameat(dir_.get(), temp_.c_str(), dir_.get(), name_.c_str()) == 0) {
      return absl::OkStatus();
    }
    return ErrnoError("cannot rename onto", path_, errno);
  }
  // The file system refuses an existing name (EEXIST) in one step.
  if (renameat2(dir_.get(), temp_.c_str(), dir_.get(), name_.c_str(), RENAME_NOREPLACE) == 0) {
    return absl::OkStatus();
  }
  if (errno != EINVAL && errno != ENOSYS) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat("'", path_, "' already exists"));
    }
    return ErrnoError("cannot rename onto", path_, errno);
  }
  // A file system without RENAME_NOREPLACE: a hard link is never made
  // over an existing name either.
  if (linkat(dir_.get(), temp_.c_str(), dir_.get(), name_.c_str(), 0) != 0) {
    if (errno == EEXIST) {
      return absl::AlreadyExistsError(absl::StrCat("'", path_, "' already exists"));
    }
    return ErrnoError("cannot link onto", path_, errno);
  }
  unlinkat(dir_.get(), temp_.c_str(), 0);
  return absl::OkStatus();
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view data) {
  auto file = AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  if (absl::Status s = file->Append(data); !s.ok()) return s;
  return file->Commit();
}

absl::Status WriteFileAtomicallyAt(int dir, const std::string& dir_path, const std::string& name,
                                   std::string_view data) {
  auto file = AtomicFile::OpenAt(dir, dir_path, name, AtomicFile::Existing::kRefuse);
  if (!file.ok()) return file.status();
  if (absl::Status s = file->Append(data); !s.ok()) return s;
  return file->Commit();
}

absl::Status WriteFileAtomically(const std::string& path,
                                 const std::vector<std::string_view>& pieces) {
  auto file = AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  for (std::string_view piece : pieces) {
    if (absl::Status s = file->Append(piece); !s.ok()) return s;
  }
  return file->Commit();
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
