#include "src/export/logdir.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "src/export/atomic_file.h"
#include "src/export/chrome_trace.h"
#include "src/export/gzip.h"
#include "src/export/kineto_trace.h"
#include "src/export/trace_stream.h"
#include "src/export/xspace_file.h"

namespace neuronprof {
namespace exporter {
std::string ToPlainName(std::string_view name) {
  std::string plain;
  for (char c : name) plain.push_back(xplane::IsPlainChar(c) ? c : '_');
  if (!IsPlainName(plain)) plain = "localhost";
  return plain;
}

std::string LocalHostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return ToPlainName(name);
}

std::string RunNameForTime(int64_t epoch_ns) {
  const time_t seconds = static_cast<time_t>(epoch_ns / 1000000000);
  struct tm local;
  localtime_r(&seconds, &local);
  return absl::StrFormat("%04d_%02d_%02d_%02d_%02d_%02d", local.tm_year + 1900, local.tm_mon + 1,
                         local.tm_mday, local.tm_hour, local.tm_min, local.tm_sec);
}

std::string ProfileRoot(const std::string& logdir) {
  return absl::StrCat(logdir, "/plugins/profile");
}

bool ChromeTraceWanted(std::optional<bool> asked, bool kineto_written) {
  return asked.value_or(!kineto_written);
}

absl::StatusOr<std::string> CreateRunDirectory(const std::string& logdir,
                                               const std::string& run_name, int64_t epoch_ns) {
  const std::string root = ProfileRoot(logdir);
  if (absl::Status made = MakeDirectories(root); !made.ok()) return made;
  auto try_create = [](const std::string& path) -> absl::StatusOr<bool> {
    if (mkdir(path.c_str(), 0755) == 0) return true;
    if (errno == EEXIST) return false;
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create run directory '", path, "': ", std::strerror(errno)));
  };
  if (!run_name.empty()) {
    const std::string path = absl::StrCat(root, "/", run_name);
    auto created = try_create(path);
    if (!created.ok()) return created.status();
    if (!*created) {
      return absl::AlreadyExistsError(
          absl::StrCat("run directory '", path, "' already exists; choose another run_name"));
    }
    return path;
  }
  const std::string base = absl::StrCat(root, "/", RunNameForTime(epoch_ns));
  std::vector<std::string> candidates = {
      base, absl::StrFormat("%s_%03d", base, static_cast<int>((epoch_ns / 1000000) % 1000))};
  for (int i = 2; i < 1000; ++i) {
    candidates.push_back(
        absl::StrFormat("%s_%03d_%d", base, static_cast<int>((epoch_ns / 1000000) % 1000), i));
  }
  for (const std::string& path : candidates) {
    auto created = try_create(path);
    if (!created.ok()) return created.status();
    if (*created) return path;
  }
  return absl::AlreadyExistsError(
      absl::StrCat("cannot find a free run directory name near '", base, "'"));
}

absl::StatusOr<RunDirectory> JoinRunDirectory(const std::string& logdir,
                                              const std::string& run_name) {
  const std::string root = ProfileRoot(logdir);
  if (absl::Status made = MakeDirectories(root); !made.ok()) return made;
  RunDirectory run{absl::StrCat(root, "/", run_name), true};
  if (mkdir(run.path.c_str(), 0755) == 0) return run;
  if (errno != EEXIST) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create run directory '", run.path, "': ", std::strerror(errno)));
  }
  struct stat st;
  if (lstat(run.path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("run directory '", run.path, "' exists but is not a folder"));
  }
  run.created = false;
  return run;
}

absl::StatusOr<std::string> CreateFallbackDirectory(const std::string& run) {
  const char* tmp = std::getenv("TMPDIR");
  std::string path = absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp",
                                  "/neuronprof-unsaved-", run, "-XXXXXX");
  if (mkdtemp(path.data()) == nullptr) {
    return absl::PermissionDeniedError(absl::StrCat("cannot create a fallback folder like '", path,
                                                    "': ", std::strerror(errno),
                                                    " (set TMPDIR to a writable folder)"));
  }
  return path;
}

namespace {

// Hands protobuf's output to a ByteSink piece by piece, so no whole copy
// of the serialized XSpace is held (tens of MB for a large capture).
class SinkOutput : public google::protobuf::io::CopyingOutputStream {
 public:
  explicit SinkOutput(ByteSink* sink) : sink_(sink) {}
  bool Write(const void* buffer, int size) override {
    status_ = sink_->Append({static_cast<const char*>(buffer), static_cast<size_t>(size)});
    return status_.ok();
  }
  const absl::Status& status() const { return status_; }

 private:
  ByteSink* const sink_;
  absl::Status status_;
};

absl::Status WriteXPlane(const tensorflow::profiler::XSpace& space, const std::string& path,
                         const StreamedPlane& streamed_plane) {
  if (streamed_plane) return WriteXSpaceStreamed(space, streamed_plane, path);
  auto file = AtomicFile::Open(path);
  if (!file.ok()) return file.status();
  SinkOutput output(&*file);
  bool serialized;
  {
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&output, 1 << 20);
    serialized = space.SerializeToZeroCopyStream(&stream) && stream.Flush();
  }
  if (!output.status().ok()) return output.status();
  if (!serialized) return absl::InternalError("cannot serialize the XSpace");
  return file->Commit();
}

// Puts the serialized file `from` at `to` without serializing again: a
// hard link (keep) or a rename; a copy when they are on different
// filesystems, where neither works.
absl::Status PlaceFile(const std::string& from, const std::string& to, bool keep) {
  const int placed = keep ? link(from.c_str(), to.c_str()) : rename(from.c_str(), to.c_str());
  if (placed == 0) return absl::OkStatus();
  if (errno != EXDEV && errno != EPERM) {
    return absl::InternalError(absl::StrCat("cannot ", keep ? "link" : "move", " '", from, "' to '",
                                            to, "': ", std::strerror(errno)));
  }
  // EXDEV: another filesystem; EPERM: one that refuses hard links.
  auto data = ReadRegularFile(from, kMaxXSpaceFileBytes, "an XSpace file");
  if (!data.ok()) return data.status();
  if (absl::Status s = WriteFileAtomically(to, *data); !s.ok()) return s;
  if (!keep) unlink(from.c_str());
  return absl::OkStatus();
}

// The xplane.pb of `dir`: serialized there, or serialized once into the
// staging folder and placed from there.
absl::Status WriteXPlaneInto(const tensorflow::profiler::XSpace& space,
                             const std::string& xplane_path, const std::string& host,
                             const ExportOptions& options) {
  if (options.xplane_staging_dir.empty()) {
    return WriteXPlane(space, xplane_path, options.streamed_plane);
  }
  const std::string staged = absl::StrCat(options.xplane_staging_dir, "/", host, kXPlaneSuffix);
  if (absl::Status s = WriteXPlane(space, staged, options.streamed_plane); !s.ok()) return s;
  return PlaceFile(staged, xplane_path, options.keep_staged_xplane);
}

// Feeds fragments of `space` plus a streamed plane to the trace files:
// the first fragment carries `space` whole, the next ones its planes
// without their lines (each line's events come once).
class FragmentFeed {
 public:
  explicit FragmentFeed(const tensorflow::profiler::XSpace& space) : fragment_(space) {}

  tensorflow::profiler::XPlane* plane() {
    if (plane_ == nullptr) plane_ = fragment_.add_planes();
    return plane_;
  }
  absl::Status Append(const std::vector<std::unique_ptr<TraceFileStream>>& files) {
    for (const auto& file : files) {
      if (absl::Status s = file->Append(fragment_); !s.ok()) return s;
    }
    if (!first_done_) {
      first_done_ = true;
      for (tensorflow::profiler::XPlane& other : *fragment_.mutable_planes()) {
        if (&other != plane_) other.clear_lines();
      }
    }
    return absl::OkStatus();
  }

 private:
  tensorflow::profiler::XSpace fragment_;
  tensorflow::profiler::XPlane* plane_ = nullptr;
  bool first_done_ = false;
};

// The Chrome and Kineto traces of `space` plus the streamed plane, from
// options.plane_fragments: one pass over the records feeds both.
absl::Status WriteTracesFromFragments(const tensorflow::profiler::XSpace& space,
                                      const std::vector<std::string>& paths,
                                      const std::vector<TraceFormat>& formats,
                                      const ExportOptions& options) {
  std::vector<std::unique_ptr<TraceFileStream>> files;
  for (size_t i = 0; i < paths.size(); ++i) {
    auto file = TraceFileStream::Open(formats[i], paths[i]);
    if (!file.ok()) return file.status();
    files.push_back(std::move(*file));
  }
  FragmentFeed feed(space);
  if (absl::Status s = options.plane_fragments(feed.plane(), [&] { return feed.Append(files); });
      !s.ok()) {
    return s;  // The files are removed: none was finished.
  }
  for (const auto& file : files) {
    if (absl::Status s = file->Finish(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// WriteProfileFiles with a streamed plane: the xplane.pb first (the pass
// that makes the plane's metadata), then both traces from one more pass.
// Neither holds the plane whole.
absl::StatusOr<std::vector<std::string>> WriteStreamedProfileFiles(
    const tensorflow::profiler::XSpace& space, const std::string& dir, const std::string& host,
    const ExportOptions& options) {
  const std::string xplane_path = absl::StrCat(dir, "/", host, kXPlaneSuffix);
  std::vector<std::string> paths = {xplane_path};
  std::vector<TraceFormat> formats;
  if (options.chrome_trace) {
    paths.push_back(absl::StrCat(dir, "/", host, kChromeTraceSuffix));
    formats.push_back(TraceFormat::kChrome);
  }
  if (!options.pytorch_trace_dir.empty()) {
    paths.push_back(absl::StrCat(options.pytorch_trace_dir, "/", host, kPyTorchTraceSuffix));
    formats.push_back(TraceFormat::kKineto);
  }
  if (!formats.empty() && !options.plane_fragments) {
    return absl::InvalidArgumentError(
        "a streamed xplane.pb needs its plane's fragments for a Chrome or Kineto trace beside it");
  }
  if (absl::Status s = WriteXPlaneInto(space, xplane_path, host, options); !s.ok()) return s;
  absl::Status traces = absl::OkStatus();
  if (!options.pytorch_trace_dir.empty()) traces = MakeDirectories(options.pytorch_trace_dir);
  if (traces.ok() && !formats.empty()) {
    traces = WriteTracesFromFragments(space, {paths.begin() + 1, paths.end()}, formats, options);
  }
  if (!traces.ok()) {
    // As WriteProfileFiles: no part of a failed export stays.
    unlink(xplane_path.c_str());
    if (!options.xplane_staging_dir.empty() && options.keep_staged_xplane) {
      unlink(absl::StrCat(options.xplane_staging_dir, "/", host, kXPlaneSuffix).c_str());
    }
    return traces;
  }
  if (!options.xplane_staging_dir.empty() && options.keep_staged_xplane) {
    paths.push_back(absl::StrCat(options.xplane_staging_dir, "/", host, kXPlaneSuffix));
  }
  return paths;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> WriteProfileFiles(
    const tensorflow::profiler::XSpace& space, const std::string& dir, const std::string& host,
    const ExportOptions& options) {
  if (options.streamed_plane) return WriteStreamedProfileFiles(space, dir, host, options);
  const std::string xplane_path = absl::StrCat(dir, "/", host, kXPlaneSuffix);
  std::vector<std::string> paths = {xplane_path};
  // The writers only read the XSpace: the JSON + gzip ones (most of the
  // export time of a large capture) run beside each other and the xplane
  // one, each on its own thread, so Stop() waits for the slowest only.
  std::vector<std::future<absl::Status>> writers;
  if (options.chrome_trace) {
    paths.push_back(absl::StrCat(dir, "/", host, kChromeTraceSuffix));
    writers.push_back(std::async(std::launch::async, [&space, path = paths.back()] {
      return WriteChromeTraceFile(space, path);
    }));
  }
  if (!options.pytorch_trace_dir.empty()) {
    paths.push_back(absl::StrCat(options.pytorch_trace_dir, "/", host, kPyTorchTraceSuffix));
    absl::Status made = MakeDirectories(options.pytorch_trace_dir);
    writers.push_back(std::async(std::launch::async, [&space, made, path = paths.back()] {
      return made.ok() ? WriteKinetoTraceFile(space, path) : made;
    }));
  }
  absl::Status status = WriteXPlaneInto(space, xplane_path, host, options);
  std::vector<const std::string*> written;
  for (size_t i = 0; i < writers.size(); ++i) {
    absl::Status done = writers[i].get();  // Every thread ends before we return.
    if (done.ok()) written.push_back(&paths[i + 1]);
    if (status.ok()) status = std::move(done);
  }
  if (!status.ok()) {
    // As when one writer ran after the other: no part of a failed export stays.
    for (const std::string* path : written) unlink(path->c_str());
    return status;
  }
  if (!options.xplane_staging_dir.empty() && options.keep_staged_xplane) {
    paths.push_back(absl::StrCat(options.xplane_staging_dir, "/", host, kXPlaneSuffix));
  }
  return paths;
}

}  // namespace exporter
}  // namespace neuronprof
