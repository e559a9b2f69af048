// exporter::ReadXSpaceFile, the one reader of .xplane.pb files: anything but
// a regular, non-empty, parseable file of bounded size is an error naming
// the file and the problem, returned at once.
#include "src/export/xspace_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "src/export/atomic_file.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace exporter {
namespace {

std::string Message(const absl::Status& status) { return std::string(status.message()); }

std::string SampleBytes() {
  tensorflow::profiler::XSpace space;
  space.add_hostnames("host");
  auto* plane = space.add_planes();
  plane->set_name("/host:CPU");
  plane->add_lines()->add_events()->set_duration_ps(5);
  return space.SerializeAsString();
}

TEST_CASE("a capture reads back whole") {
  testing::TempDir dir;
  const std::string path = dir.path() + "/host.xplane.pb";
  REQUIRE(WriteFileAtomically(path, SampleBytes()).ok());
  auto space = ReadXSpaceFile(path);
  REQUIRE(space.ok());
  CHECK(space->hostnames(0) == "host");
  CHECK(space->planes(0).lines(0).events(0).duration_ps() == 5);
}

TEST_CASE("FIFOs devices and directories are refused without reading") {
  testing::TempDir dir;
  const std::string fifo = dir.path() + "/fifo.xplane.pb";
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  // Without O_NONBLOCK this open would wait for a writer forever.
  auto from_fifo = ReadXSpaceFile(fifo);
  REQUIRE_FALSE(from_fifo.ok());
  CHECK(Message(from_fifo.status()) == "'" + fifo + "' is a FIFO (named pipe), not a regular file");

  auto from_zero = ReadXSpaceFile("/dev/zero");
  REQUIRE_FALSE(from_zero.ok());
  CHECK(Message(from_zero.status()) == "'/dev/zero' is a character device, not a regular file");

  auto from_dir = ReadXSpaceFile(dir.path());
  REQUIRE_FALSE(from_dir.ok());
  CHECK(Message(from_dir.status()).find("is a directory") != std::string::npos);

  auto missing = ReadXSpaceFile(dir.path() + "/nope.xplane.pb");
  REQUIRE_FALSE(missing.ok());
  CHECK(absl::IsNotFound(missing.status()));
}

TEST_CASE("the size limit is checked before reading and named in the error") {
  testing::TempDir dir;
  const std::string path = dir.path() + "/big.xplane.pb";
  REQUIRE(WriteFileAtomically(path, std::string(100, 'x')).ok());
  auto read = ReadRegularFile(path, 99, "test limit");
  REQUIRE_FALSE(read.ok());
  CHECK(Message(read.status()) ==
        "'" + path + "' holds 100 bytes, over the limit of 99 bytes (test limit)");
  auto exact = ReadRegularFile(path, 100, "test limit");
  REQUIRE(exact.ok());
  CHECK(exact->size() == 100);

  // A sparse file past protobuf's limit costs no disk and is refused.
  const std::string huge = dir.path() + "/huge.xplane.pb";
  REQUIRE(WriteFileAtomically(huge, "").ok());
  REQUIRE(truncate(huge.c_str(), kMaxXSpaceFileBytes + 1) == 0);
  auto too_big = ReadXSpaceFile(huge);
  REQUIRE_FALSE(too_big.ok());
  CHECK(Message(too_big.status())
            .find("over the limit of 2147483647 bytes (protobuf cannot "
                  "parse an XSpace of 2 GiB or more)") != std::string::npos);
}

TEST_CASE("empty and truncated files are errors, not empty captures") {
  testing::TempDir dir;
  const std::string empty = dir.path() + "/empty.xplane.pb";
  REQUIRE(WriteFileAtomically(empty, "").ok());
  auto from_empty = ReadXSpaceFile(empty);
  REQUIRE_FALSE(from_empty.ok());
  CHECK(Message(from_empty.status()) == "'" + empty + "': empty file: not an XSpace");

  const std::string bytes = SampleBytes();
  const std::string truncated = dir.path() + "/truncated.xplane.pb";
  REQUIRE(WriteFileAtomically(truncated, bytes.substr(0, bytes.size() - 3)).ok());
  auto from_truncated = ReadXSpaceFile(truncated);
  REQUIRE_FALSE(from_truncated.ok());
  CHECK(Message(from_truncated.status()).find("is not an XSpace (.xplane.pb) file") !=
        std::string::npos);
}

}  // namespace
}  // namespace exporter
}  // namespace neuronprof
