// Writing a logdir safely: writes relative to a held directory that never
// follow a link, the fallback folder made with mkdtemp, and a full disk
// that leaves nothing half-written behind.
#include "src/export/logdir.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "src/export/atomic_file.h"
#include "src/export/xspace_file.h"
#include "tests/export/file_size_limit.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using testing::ListDir;
using testing::ScopedFileSizeLimit;
using testing::TempDir;

bool IsRealDirectory(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool Exists(const std::string& path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

// Sets TMPDIR for the scope.
class ScopedTmpDir {
 public:
  explicit ScopedTmpDir(const std::string& path) {
    if (const char* old = getenv("TMPDIR")) saved_ = old, had_ = true;
    setenv("TMPDIR", path.c_str(), 1);
  }
  ~ScopedTmpDir() {
    if (had_) {
      setenv("TMPDIR", saved_.c_str(), 1);
    } else {
      unsetenv("TMPDIR");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

ProfilerOptions TestOptions(const std::string& logdir, const std::string& run) {
  ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;
  options.host_name = "testhost";
  options.run_name = run;
  return options;
}

// The folder named in "... saved to '<folder>/' instead ...".
std::string SavedTo(const std::string& message) {
  const size_t at = message.find("saved to '");
  if (at == std::string::npos) return "";
  const size_t begin = at + 10;
  std::string folder = message.substr(begin, message.find('\'', begin) - begin);
  if (!folder.empty() && folder.back() == '/') folder.pop_back();
  return folder;
}

TEST_CASE("a write through a held directory stays there when its path becomes a link") {
  TempDir dir;
  TempDir outside;
  const std::string folder = dir.path() + "/run";
  REQUIRE(mkdir(folder.c_str(), 0755) == 0);
  auto held = exporter::OpenDirectory(folder);
  REQUIRE(held.ok());
  // Someone swaps the folder for a link to another place.
  REQUIRE(rename(folder.c_str(), (dir.path() + "/moved").c_str()) == 0);
  REQUIRE(symlink(outside.path().c_str(), folder.c_str()) == 0);
  REQUIRE(exporter::WriteFileAtomicallyAt(held->get(), folder, "host.xplane.pb", "data").ok());
  CHECK(ListDir(outside.path()).empty());
  CHECK(ListDir(dir.path() + "/moved") == std::vector<std::string>{"host.xplane.pb"});
}

TEST_CASE("OpenDirectoryBelow creates folders but refuses a link at any component") {
  TempDir dir;
  TempDir outside;
  auto root = exporter::OpenDirectory(dir.path());
  REQUIRE(root.ok());
  std::vector<std::string> created;
  auto made = exporter::OpenDirectoryBelow(root->get(), dir.path(), "a/b", &created);
  REQUIRE(made.ok());
  CHECK(created == std::vector<std::string>{"a", "a/b"});
  CHECK(IsRealDirectory(dir.path() + "/a/b"));

  REQUIRE(symlink(outside.path().c_str(), (dir.path() + "/a/link").c_str()) == 0);
  for (const char* relative : {"a/link", "a/link/c"}) {
    CAPTURE(relative);
    created.clear();
    auto refused = exporter::OpenDirectoryBelow(root->get(), dir.path(), relative, &created);
    REQUIRE_FALSE(refused.ok());
    CHECK(absl::IsPermissionDenied(refused.status()));
    CHECK(Contains(std::string(refused.status().message()),
                   dir.path() + "/a/link' is a symbolic link"));
    CHECK(created.empty());
  }
  CHECK(ListDir(outside.path()).empty());
  auto dotdot = exporter::OpenDirectoryBelow(root->get(), dir.path(), "a/../..", &created);
  CHECK(absl::IsInvalidArgument(dotdot.status()));

  // Taking made folders away again goes through the same no-link walk.
  exporter::RemoveCreatedDirectories(root->get(), {"a", "a/b"});
  CHECK_FALSE(Exists(dir.path() + "/a/b"));
  CHECK(Exists(dir.path() + "/a/link"));  // Not ours, not empty: kept.
}

TEST_CASE("a failed write leaves neither a partial file nor a temporary one") {
  TempDir dir;
  auto held = exporter::OpenDirectory(dir.path());
  REQUIRE(held.ok());
  absl::Status status;
  {
    ScopedFileSizeLimit full_disk(16);
    status = exporter::WriteFileAtomicallyAt(held->get(), dir.path(), "big.xplane.pb",
                                             std::string(4096, 'x'));
  }
  REQUIRE_FALSE(status.ok());
  CHECK(absl::IsResourceExhausted(status));
  const std::string message(status.message());
  CHECK(Contains(message, dir.path() + "/big.xplane.pb"));
  CHECK(Contains(message, "File too large"));
  CHECK(ListDir(dir.path()).empty());
}

TEST_CASE("a file name of NAME_MAX bytes is written: the temporary name stays short") {
  TempDir dir;
  const std::string name = std::string(255 - 10, 'h') + exporter::kXPlaneSuffix;
  REQUIRE(name.size() == exporter::kMaxFileNameBytes);
  REQUIRE(exporter::WriteFileAtomically(dir.path() + "/" + name, "data").ok());
  CHECK(ListDir(dir.path()) == std::vector<std::string>{name});
}

TEST_CASE("too long names are refused naming the NAME_MAX limit, echoes are cut") {
  auto status = exporter::CheckPlainName(std::string(250, 'h'), "host_name", ".xplane.pb");
  REQUIRE(absl::IsInvalidArgument(status));
  CHECK(Contains(std::string(status.message()), "NAME_MAX"));
  CHECK(Contains(std::string(status.message()), "host_name"));
  CHECK(exporter::CheckPlainName(std::string(245, 'h'), "host_name", ".xplane.pb").ok());

  status = exporter::CheckPlainName(std::string(100000, '/'), "session_id");
  REQUIRE(absl::IsInvalidArgument(status));
  CHECK(status.message().size() < 500);
  CHECK(Contains(std::string(status.message()), "(100000 bytes)"));
}

TEST_CASE("the fallback folder is fresh: a link planted at a predictable name is not followed") {
  TempDir tmp;
  TempDir outside;
  TempDir dir;
  ScopedTmpDir tmpdir(tmp.path());
  // Where the fallback used to go: $TMPDIR/neuronprof-unsaved-<run>-<pid>.
  const std::string planted =
      tmp.path() + "/neuronprof-unsaved-planted_run-" + std::to_string(getpid());
  REQUIRE(symlink(outside.path().c_str(), planted.c_str()) == 0);
  const std::string blocker = dir.path() + "/not_a_dir";
  REQUIRE(exporter::WriteFileAtomically(blocker, "x").ok());

  Profiler profiler(TestOptions(blocker + "/logs", "planted_run"));
  REQUIRE(profiler.status().ok());
  { ScopedTrace t("precious"); }
  auto result = profiler.Stop();
  REQUIRE_FALSE(result.ok());
  const std::string fallback = SavedTo(std::string(result.status().message()));
  CAPTURE(result.status().message());
  REQUIRE_FALSE(fallback.empty());
  CHECK(fallback != planted);
  CHECK(fallback.rfind(tmp.path() + "/neuronprof-unsaved-planted_run-", 0) == 0);
  CHECK(IsRealDirectory(fallback));
  struct stat info;
  REQUIRE(stat(fallback.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777) == 0700);
  CHECK(Exists(fallback + "/testhost.xplane.pb"));
  CHECK(ListDir(outside.path()).empty());
}

TEST_CASE("CreateFallbackDirectory makes a new folder every time, never an existing one") {
  TempDir tmp;
  ScopedTmpDir tmpdir(tmp.path());
  auto first = exporter::CreateFallbackDirectory("run");
  auto second = exporter::CreateFallbackDirectory("run");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first != *second);
  CHECK(IsRealDirectory(*first));
  CHECK(IsRealDirectory(*second));
}

TEST_CASE("a full disk leaves no run folder, working copy or fallback folder behind") {
  TempDir tmp;
  TempDir dir;
  ScopedTmpDir tmpdir(tmp.path());
  ProfilerOptions options = TestOptions(dir.path(), "full_run");
  options.write_pytorch_trace = true;
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  for (int i = 0; i < 100; ++i) ScopedTrace t("marker");
  absl::StatusOr<ProfileResult> result;
  {
    ScopedFileSizeLimit full_disk(16);
    result = profiler.Stop();
  }
  REQUIRE_FALSE(result.ok());
  const std::string message(result.status().message());
  CAPTURE(message);
  CHECK(absl::IsResourceExhausted(result.status()));
  CHECK(Contains(message, "File too large"));
  CHECK(Contains(message, dir.path() + "/.neuronprof_working/full_run/"));
  CHECK(Contains(message, "the fallback folder failed too"));
  CHECK_FALSE(Exists(dir.path() + "/plugins/profile/full_run"));
  CHECK_FALSE(Exists(dir.path() + "/.neuronprof_working"));
  CHECK_FALSE(Exists(dir.path() + "/full_run"));
  CHECK(ListDir(tmp.path()).empty());
}

tensorflow::profiler::XSpace SpaceNamed(const std::string& host) {
  tensorflow::profiler::XSpace space;
  space.add_hostnames(host);
  space.add_planes()->set_name("/host:CPU");
  return space;
}

exporter::ExportOptions StagedXPlaneOnly(const std::string& staging, bool keep) {
  exporter::ExportOptions options;
  options.chrome_trace = false;
  options.xplane_staging_dir = staging;
  options.keep_staged_xplane = keep;
  return options;
}

TEST_CASE("a staged xplane.pb is moved into the run folder, not written twice") {
  TempDir staging;
  TempDir run;
  auto paths = exporter::WriteProfileFiles(SpaceNamed("staged"), run.path(), "h",
                                           StagedXPlaneOnly(staging.path(), false));
  REQUIRE(paths.ok());
  CHECK(*paths == std::vector<std::string>{run.path() + "/h.xplane.pb"});
  CHECK(access((staging.path() + "/h.xplane.pb").c_str(), F_OK) != 0);  // Moved.
  auto space = exporter::ReadXSpaceFile(run.path() + "/h.xplane.pb");
  REQUIRE(space.ok());
  CHECK(space->hostnames(0) == "staged");
}

TEST_CASE("every file is written, and the xplane.pb holds the XSpace's exact bytes") {
  TempDir run;
  tensorflow::profiler::XSpace space = SpaceNamed("all");
  for (int i = 0; i < 1000; ++i) {
    space.mutable_planes(0)->add_lines()->set_name("line " + std::to_string(i));
  }
  exporter::ExportOptions options;
  options.pytorch_trace_dir = run.path() + "/pt";
  auto paths = exporter::WriteProfileFiles(space, run.path(), "h", options);
  REQUIRE(paths.ok());
  CHECK(*paths == std::vector<std::string>{run.path() + "/h.xplane.pb",
                                           run.path() + "/h.trace.json.gz",
                                           run.path() + "/pt/h.pt.trace.json.gz"});
  for (const std::string& path : *paths) CHECK(Exists(path));
  auto bytes = exporter::ReadRegularFile(run.path() + "/h.xplane.pb", 1 << 30, "test");
  REQUIRE(bytes.ok());
  CHECK(*bytes == space.SerializeAsString());  // Streamed, not serialized whole.
}

TEST_CASE("an export that fails leaves none of its files, not even the traces written beside") {
  TempDir run;
  exporter::ExportOptions options;
  options.xplane_staging_dir = run.path() + "/no_such_folder";  // The xplane.pb fails.
  options.pytorch_trace_dir = run.path() + "/pt";
  auto paths = exporter::WriteProfileFiles(SpaceNamed("failed"), run.path(), "h", options);
  REQUIRE_FALSE(paths.ok());
  CHECK(Contains(std::string(paths.status().message()), "no_such_folder"));
  CHECK_FALSE(Exists(run.path() + "/h.xplane.pb"));
  CHECK_FALSE(Exists(run.path() + "/h.trace.json.gz"));
  CHECK_FALSE(Exists(run.path() + "/pt/h.pt.trace.json.gz"));
}

TEST_CASE("a staged xplane.pb on another filesystem is copied, and kept when asked") {
  TempDir run;
  char shm_pattern[] = "/dev/shm/neuronprof_test_XXXXXX";
  struct stat shm {
  }, tmp{};
  if (mkdtemp(shm_pattern) == nullptr || stat(shm_pattern, &shm) != 0 ||
      stat(run.path().c_str(), &tmp) != 0 || shm.st_dev == tmp.st_dev) {
    WARN("no second filesystem at /dev/shm: the copy fallback is not exercised");
    return;
  }
  const std::string staging = shm_pattern;
  auto paths = exporter::WriteProfileFiles(SpaceNamed("copied"), run.path(), "h",
                                           StagedXPlaneOnly(staging, true));
  const bool staged_kept = access((staging + "/h.xplane.pb").c_str(), F_OK) == 0;
  exporter::RemoveTree(staging);
  REQUIRE(paths.ok());
  CHECK(staged_kept);
  CHECK(paths->back() == staging + "/h.xplane.pb");
  auto space = exporter::ReadXSpaceFile(run.path() + "/h.xplane.pb");
  REQUIRE(space.ok());
  CHECK(space->hostnames(0) == "copied");
}

}  // namespace
}  // namespace neuronprof
