// The capture client's scan of a serialized ProfileResponse: what it finds
// must be what parsing finds, whatever the slices the bytes arrive in, and
// bytes that are not a response are an error, never a crash.
#include "src/rpc/response_scan.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "proto/profiler_service.pb.h"
#include "src/export/map_entry_rewrite.h"
#include "src/rpc/capture_client.h"
#include "src/xplane/clock_offset.h"
#include "src/xplane/job_identity.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/export/map_churn.h"
#include "tests/rpc/byte_pieces.h"

namespace neuronprof {
namespace {

using rpc::BytePieces;
using tensorflow::profiler::XSpace;
using testing::Cut;
using testing::DeterministicBytes;

XSpace SampleSpace() {
  XSpace space;
  for (int p = 0; p < 2; ++p) {
    xplane::XPlaneBuilder plane(space.add_planes());
    plane.plane()->set_name("/host:CPU" + std::to_string(p));
    const int64_t kernel = plane.EventMetadataId("kernel");
    for (int l = 0; l < 3; ++l) {
      auto* line = plane.AddLine(l, "thread " + std::to_string(l), 1000);
      for (int e = 0; e < 40 + p + l; ++e) {
        auto* event = plane.AddEvent(line, kernel, e * 1000, 500);
        plane.AddStat(event, "step", int64_t{e});
      }
    }
  }
  space.add_hostnames("worker0");
  space.add_warnings("42 events dropped");
  space.add_errors("an error");
  return space;
}

// Whether every piece lies within `bytes`: the scan copied nothing.
bool Within(const BytePieces& pieces, const std::string& bytes) {
  for (std::string_view piece : pieces) {
    if (piece.data() < bytes.data() || piece.data() + piece.size() > bytes.data() + bytes.size()) {
      return false;
    }
  }
  return true;
}

std::string Join(const BytePieces& pieces) {
  std::string joined;
  for (std::string_view piece : pieces) joined.append(piece);
  return joined;
}

TEST_CASE("the scan finds the XSpace's bytes, host names, warnings and events in any slicing") {
  const XSpace space = SampleSpace();
  tensorflow::ProfileResponse response;
  response.add_tool_data()->set_name("trace_viewer");
  *response.mutable_xspace() = space;
  // Fields may follow the xspace (a merged response): they are not its bytes.
  tensorflow::ProfileResponse after;
  after.set_empty_trace(true);
  after.add_tool_data()->set_name("later");
  const std::string bytes = response.SerializeAsString() + after.SerializeAsString();
  for (size_t size : {size_t{1}, size_t{3}, size_t{7}, size_t{64}, bytes.size()}) {
    CAPTURE(size);
    auto scanned = rpc::ScanProfileResponse(Cut(bytes, size), "server:1");
    REQUIRE(scanned.ok());
    CHECK(scanned->xspace_fields == 1);
    CHECK(scanned->events == xplane::NumEvents(space));
    CHECK(scanned->hostnames == std::vector<std::string>{"worker0"});
    CHECK(scanned->warnings == std::vector<std::string>{"42 events dropped"});
    CHECK(Join(scanned->xspace) == space.SerializeAsString());
    CHECK(scanned->rewritten == nullptr);
    CHECK(Within(scanned->xspace, bytes));
    XSpace parsed;
    REQUIRE(rpc::ParsePieces(scanned->xspace, &parsed));
    CHECK(parsed.SerializeAsString() == space.SerializeAsString());
  }
}

TEST_CASE("the scan reads the rank identity of the Task Environment plane") {
  XSpace space = SampleSpace();
  tensorflow::ProfileResponse single;
  *single.mutable_xspace() = space;
  auto plain = rpc::ScanProfileResponse({single.SerializeAsString()}, "server:1");
  REQUIRE(plain.ok());
  CHECK(plain->identity == xplane::JobIdentity());  // None stored: rank 0 of 1.

  xplane::SetProfileTimes(&space, 1000, 2000);
  xplane::JobIdentity identity;
  identity.rank = 2;
  identity.local_rank = 0;
  identity.world_size = 3;
  identity.backend = "nccl";
  xplane::AddJobIdentity(identity, &space);
  tensorflow::ProfileResponse response;
  *response.mutable_xspace() = space;
  const std::string bytes = response.SerializeAsString();
  for (size_t size : {size_t{1}, size_t{5}, bytes.size()}) {
    CAPTURE(size);
    auto scanned = rpc::ScanProfileResponse(Cut(bytes, size), "server:1");
    REQUIRE(scanned.ok());
    CHECK(scanned->identity == identity);
    CHECK(scanned->events == xplane::NumEvents(space));
  }
}

TEST_CASE("a response without an xspace, or with it in two parts, is told apart") {
  tensorflow::ProfileResponse response;
  response.add_tool_data()->set_name("xplane.pb");
  auto none = rpc::ScanProfileResponse({response.SerializeAsString()}, "server:1");
  REQUIRE(none.ok());
  CHECK(none->xspace_fields == 0);
  CHECK(none->events == 0);

  // Protobuf merges repeated occurrences: the XSpace is their bytes in a row.
  tensorflow::ProfileResponse first;
  *first.mutable_xspace() = SampleSpace();
  tensorflow::ProfileResponse second;
  second.mutable_xspace()->add_hostnames("worker1");
  xplane::SetProfileTimes(second.mutable_xspace(), 1000, 2000);
  const std::string twice = first.SerializeAsString() + second.SerializeAsString();
  tensorflow::ProfileResponse parsed;
  REQUIRE(parsed.ParseFromString(twice));
  for (size_t size : {size_t{1}, size_t{64}, twice.size()}) {
    CAPTURE(size);
    auto merged = rpc::ScanProfileResponse(Cut(twice, size), "server:1");
    REQUIRE(merged.ok());
    CHECK(merged->xspace_fields == 2);
    CHECK(Within(merged->xspace, twice));
    XSpace space;
    REQUIRE(rpc::ParsePieces(merged->xspace, &space));
    CHECK(DeterministicBytes(space) == DeterministicBytes(parsed.xspace()));
    CHECK(merged->events == xplane::NumEvents(parsed.xspace()));
    CHECK(merged->hostnames == std::vector<std::string>{"worker0", "worker1"});
    CHECK(merged->planes == 3);
    // The Task Environment plane of the second part, relative to the whole.
    REQUIRE(merged->task_environment.has_value());
    CHECK(DeterministicBytes(*merged->task_environment) ==
          DeterministicBytes(parsed.xspace().planes(2)));
    CHECK(merged->task_environment_offset == static_cast<int64_t>(first.xspace().ByteSizeLong()));
  }
}

TEST_CASE("map entries protobuf would insert and erase reach it rewritten, in any slicing") {
  // Counted as map_entry_rewrite_test counts them: each churning entry costs
  // protobuf an insert, an erase and a scan of its table (quadratic).
  constexpr int kHeld = 500;
  constexpr int kChurn = 5000;
  const std::string space_bytes = testing::ChurningCaptureSpace(kHeld, kChurn);
  REQUIRE(testing::ChurningEntries(space_bytes) == 2 * kChurn);
  std::string response;
  testing::AppendBytesField(8, space_bytes, &response);
  const auto canonical = exporter::CanonicalMapEntries(space_bytes);
  REQUIRE(canonical.ok());
  REQUIRE(canonical->has_value());
  XSpace expected;  // What protobuf makes of the bytes, quadratic or not.
  REQUIRE(expected.ParseFromString(space_bytes));
  for (size_t size : {size_t{1}, size_t{4096}, response.size()}) {
    CAPTURE(size);
    auto scanned = rpc::ScanProfileResponse(Cut(response, size), "server:1");
    REQUIRE(scanned.ok());
    REQUIRE(scanned->rewritten != nullptr);
    const std::string bytes = Join(scanned->xspace);
    CHECK(testing::ChurningEntries(bytes) == 0);  // One insert per entry.
    CHECK(bytes == **canonical);                  // The file reader's rewrite.
    XSpace space;
    REQUIRE(rpc::ParsePieces(scanned->xspace, &space));
    CHECK(DeterministicBytes(space) == DeterministicBytes(expected));
    CHECK(scanned->events == 1);
    CHECK(scanned->hostnames == std::vector<std::string>{"crafted"});
    CHECK(scanned->identity.rank == 1);
    CHECK(scanned->identity.world_size == 2);
    REQUIRE(scanned->task_environment.has_value());
    CHECK(DeterministicBytes(*scanned->task_environment) == DeterministicBytes(expected.planes(0)));
    CHECK(scanned->task_environment->stat_metadata().size() ==
          expected.planes(0).stat_metadata().size());
  }
}

TEST_CASE("a map entry that is not wire format is refused before protobuf sees it") {
  std::string plane;
  testing::AppendBytesField(5, std::string("\x08\x01\x12\x05\x08", 5), &plane);  // Cut.
  std::string space;
  testing::AppendBytesField(1, plane, &space);
  std::string response;
  testing::AppendBytesField(8, space, &response);
  auto scanned = rpc::ScanProfileResponse({response}, "server:1");
  CHECK(absl::IsDataLoss(scanned.status()));
  XSpace parsed;
  CHECK_FALSE(parsed.ParseFromString(space));
}

TEST_CASE("bytes that are not a ProfileResponse are refused, naming the server") {
  tensorflow::ProfileResponse response;
  *response.mutable_xspace() = SampleSpace();
  const std::string bytes = response.SerializeAsString();
  // Every truncation inside the xspace field breaks a length.
  for (size_t length = 1; length < bytes.size(); length += 97) {
    CAPTURE(length);
    auto scanned =
        rpc::ScanProfileResponse({std::string_view(bytes).substr(0, length)}, "server:1");
    REQUIRE_FALSE(scanned.ok());
    CHECK(absl::IsDataLoss(scanned.status()));
    CHECK(scanned.status().message().find("server:1") != std::string::npos);
  }
  const std::string zero_tag("\0\0", 2);
  CHECK(absl::IsDataLoss(rpc::ScanProfileResponse({zero_tag}, "server:1").status()));
}

TEST_CASE("the Task Environment plane is replaced in place or appended in any slicing") {
  // Between the host planes, as a space built in that order has it.
  XSpace space = SampleSpace();
  {
    XSpace with_environment;
    *with_environment.add_planes() = space.planes(0);
    xplane::SetProfileTimes(&with_environment, 1000, 2000);
    *with_environment.add_planes() = space.planes(1);
    with_environment.add_hostnames("worker0");
    space = with_environment;
  }
  tensorflow::ProfileResponse response;
  *response.mutable_xspace() = space;
  const std::string bytes = response.SerializeAsString();
  for (size_t size : {size_t{1}, size_t{5}, bytes.size()}) {
    CAPTURE(size);
    auto scanned = rpc::ScanProfileResponse(Cut(bytes, size), "server:1");
    REQUIRE(scanned.ok());
    REQUIRE(scanned->task_environment.has_value());
    CHECK(scanned->planes == 3);
    CHECK_FALSE(scanned->epoch_line_times);  // Lines at 1000 ns: relative.
    tensorflow::profiler::XPlane environment = *scanned->task_environment;
    xplane::RecordClockOffset(xplane::ClockOffset{400, 7}, &environment);
    std::string storage;
    XSpace replaced;
    REQUIRE(
        rpc::ParsePieces(rpc::ReplaceTaskEnvironment(*scanned, environment, &storage), &replaced));
    XSpace expected = space;
    xplane::AlignSpaceClock(xplane::ClockOffset{400, 7}, &expected);
    CHECK(replaced.planes_size() == 3);
    CHECK(replaced.planes(1).name() == xplane::kTaskEnvironmentPlaneName);
    CHECK(xplane::ProfileStartEpochNs(replaced) == 600);
    CHECK(xplane::ReadClockOffset(replaced)->offset_ns == 400);
    CHECK(replaced.planes(0).SerializeAsString() == expected.planes(0).SerializeAsString());
    CHECK(replaced.planes(2).SerializeAsString() == expected.planes(2).SerializeAsString());
    CHECK(replaced.hostnames(0) == "worker0");
  }

  // Without one (another profiler's space), it is appended.
  const XSpace plain = SampleSpace();
  tensorflow::ProfileResponse plain_response;
  *plain_response.mutable_xspace() = plain;
  const std::string plain_bytes = plain_response.SerializeAsString();  // The pieces' bytes.
  auto scanned = rpc::ScanProfileResponse({plain_bytes}, "server:1");
  REQUIRE(scanned.ok());
  CHECK_FALSE(scanned->task_environment.has_value());
  tensorflow::profiler::XPlane environment;
  environment.set_id(scanned->planes);
  environment.set_name(xplane::kTaskEnvironmentPlaneName);
  xplane::RecordClockOffset(std::nullopt, &environment);
  std::string storage;
  XSpace replaced;
  REQUIRE(
      rpc::ParsePieces(rpc::ReplaceTaskEnvironment(*scanned, environment, &storage), &replaced));
  REQUIRE(replaced.planes_size() == 3);
  CHECK(replaced.planes(2).name() == xplane::kTaskEnvironmentPlaneName);
  CHECK(replaced.planes(2).id() == 2);
  CHECK(replaced.planes(0).SerializeAsString() == plain.planes(0).SerializeAsString());
  CHECK(replaced.errors(0) == "an error");
}

// A varint of `value` in `extra` more bytes than it needs (valid protobuf:
// parsers read up to 10 bytes, continuation bits then zero payload).
std::string Varint(uint64_t value, int extra = 0) {
  std::string out;
  do {
    const uint8_t low = value & 0x7f;
    value >>= 7;
    out.push_back(static_cast<char>(low | ((value != 0 || extra > 0) ? 0x80 : 0)));
  } while (value != 0);
  for (int i = 0; i < extra; ++i) out.push_back(static_cast<char>(i + 1 < extra ? 0x80 : 0x00));
  return out;
}

// A length-delimited field with its tag and length each `extra` bytes long.
std::string Field(int number, const std::string& body, int extra) {
  return Varint(static_cast<uint64_t>(number) << 3 | 2, extra) + Varint(body.size(), extra) + body;
}

TEST_CASE("the scan reads non-canonical encodings as protobuf's parse does") {
  XSpace space = SampleSpace();
  xplane::SetProfileTimes(&space, 1000, 2000);
  xplane::JobIdentity identity;
  identity.rank = 1;
  identity.world_size = 2;
  identity.backend = "gloo";
  xplane::AddJobIdentity(identity, &space);  // The Task Environment plane, planes(2).
  for (int extra : {0, 1, 2, 3}) {
    CAPTURE(extra);
    // Fields out of order (hostnames and warnings before the planes), the
    // Task Environment plane's name given twice (the last one counts), and
    // every plane's tag and length `extra` bytes too long.
    std::string xspace = Field(4, "worker0", extra) + Field(3, "42 events dropped", extra);
    for (const auto& plane : space.planes()) {
      std::string body = plane.SerializeAsString();
      if (plane.name() == xplane::kTaskEnvironmentPlaneName) body = Field(2, "not it", 0) + body;
      xspace += Field(1, body, extra);
    }
    const std::string bytes = Field(8, xspace, extra);
    tensorflow::ProfileResponse parsed;
    REQUIRE(parsed.ParseFromString(bytes));  // The reference: protobuf's own parse.
    REQUIRE(parsed.xspace().planes_size() == space.planes_size());
    for (size_t size : {size_t{1}, size_t{3}, bytes.size()}) {
      CAPTURE(size);
      auto scanned = rpc::ScanProfileResponse(Cut(bytes, size), "server:1");
      REQUIRE(scanned.ok());
      CHECK(scanned->identity == identity);
      CHECK(scanned->planes == parsed.xspace().planes_size());
      CHECK(scanned->events == xplane::NumEvents(parsed.xspace()));
      CHECK(scanned->hostnames == std::vector<std::string>{"worker0"});
      REQUIRE(scanned->task_environment.has_value());
      tensorflow::profiler::XPlane environment = *scanned->task_environment;
      xplane::RecordClockOffset(xplane::ClockOffset{400, 7}, &environment);
      std::string storage;
      XSpace replaced;
      REQUIRE(rpc::ParsePieces(rpc::ReplaceTaskEnvironment(*scanned, environment, &storage),
                               &replaced));
      // Nothing lost: the other planes as protobuf read them, the new plane
      // in the old one's place with the identity and the clock offset.
      REQUIRE(replaced.planes_size() == space.planes_size());
      CHECK(replaced.planes(0).SerializeAsString() ==
            parsed.xspace().planes(0).SerializeAsString());
      CHECK(replaced.planes(1).SerializeAsString() ==
            parsed.xspace().planes(1).SerializeAsString());
      CHECK(xplane::ReadJobIdentity(replaced.planes(2)) == identity);
      CHECK(xplane::ReadClockOffset(replaced)->offset_ns == 400);
      CHECK(replaced.hostnames_size() == 1);
      CHECK(replaced.warnings_size() == 1);
    }
  }
}

TEST_CASE("the scan notes lines whose timestamps are on the epoch") {
  XSpace space = SampleSpace();
  space.mutable_planes(1)->mutable_lines(2)->set_timestamp_ns(xplane::kEpochLineTimeNs);
  tensorflow::ProfileResponse response;
  *response.mutable_xspace() = space;
  auto scanned = rpc::ScanProfileResponse({response.SerializeAsString()}, "server:1");
  REQUIRE(scanned.ok());
  CHECK(scanned->epoch_line_times);
}

}  // namespace
}  // namespace neuronprof
