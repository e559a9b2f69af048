// Putting a host's XSpace on the capture client's clock.
#include "src/xplane/clock_offset.h"

#include <catch2/catch.hpp>
#include <limits>

#include "src/xplane/job_identity.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {
namespace {

constexpr int64_t kStart = int64_t{1'760'000'000'000'000'000};  // 2025, epoch ns.

std::string AlignmentOf(const XSpace& space) {
  const PlaneVisitor visitor(*FindPlane(space, kTaskEnvironmentPlaneName));
  const auto stat = visitor.PlaneStat(kClockAlignmentStat);
  return stat ? std::string(stat->StrValue().value_or("")) : "";
}

TEST_CASE("a measured offset moves the profile times and epoch lines, not relative lines") {
  XSpace space;
  SetProfileTimes(&space, kStart, kStart + 1000);
  JobIdentity identity;
  identity.rank = 3;
  identity.world_size = 4;
  AddJobIdentity(identity, &space);
  XPlaneBuilder host(FindOrAddPlane(&space, kHostPlaneName));
  XLine* relative = host.AddLine(1, "relative", 500);      // neuronprof's lines
  XLine* absolute = host.AddLine(2, "epoch", kStart + 7);  // TSL's lines
  host.AddEvent(relative, host.EventMetadataId("a"), 0, 1000);

  AlignSpaceClock(ClockOffset{3'600'000'000'000, 40'000}, &space);
  CHECK(ProfileStartEpochNs(space) == kStart - 3'600'000'000'000);
  CHECK(ProfileStopEpochNs(space) == kStart + 1000 - 3'600'000'000'000);
  CHECK(relative->timestamp_ns() == 500);
  CHECK(absolute->timestamp_ns() == kStart + 7 - 3'600'000'000'000);
  CHECK(relative->events(0).offset_ps() == 0);
  CHECK(AlignmentOf(space) == kClockAlignedToClient);
  const auto read = ReadClockOffset(space);
  REQUIRE(read.has_value());
  CHECK(read->offset_ns == 3'600'000'000'000);
  CHECK(read->uncertainty_ns == 40'000);
  // The rank identity stays.
  CHECK(ReadJobIdentity(space).rank == 3);

  // Recorded again (a retried write): set, not appended.
  RecordClockOffset(ClockOffset{-5, 1}, FindOrAddPlane(&space, kTaskEnvironmentPlaneName));
  CHECK(ReadClockOffset(space)->offset_ns == -5);
  CHECK(FindPlane(space, kTaskEnvironmentPlaneName)->stats_size() ==
        2 + 3 + 3);  // times, rank/local_rank/world_size, clock stats
}

TEST_CASE("a server's times at the int64 ends saturate when shifted, never overflow") {
  // A remote server's XSpace (a response: untrusted) with a line and a
  // stop time at INT64_MAX, on a clock behind the client's.
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  XSpace space;
  SetProfileTimes(&space, kStart, kMax);
  XPlaneBuilder host(FindOrAddPlane(&space, kHostPlaneName));
  XLine* last = host.AddLine(1, "last", kMax);
  AlignSpaceClock(ClockOffset{-1000, 10}, &space);
  CHECK(last->timestamp_ns() == kMax);
  CHECK(ProfileStopEpochNs(space) == kMax);
  CHECK(ProfileStartEpochNs(space) == kStart + 1000);
}

TEST_CASE("an unmeasured offset leaves every time as it was and says so") {
  XSpace space;
  SetProfileTimes(&space, kStart, kStart + 1000);
  XPlaneBuilder host(FindOrAddPlane(&space, kHostPlaneName));
  XLine* absolute = host.AddLine(2, "epoch", kStart + 7);
  AlignSpaceClock(std::nullopt, &space);
  CHECK(ProfileStartEpochNs(space) == kStart);
  CHECK(ProfileStopEpochNs(space) == kStart + 1000);
  CHECK(absolute->timestamp_ns() == kStart + 7);
  CHECK(AlignmentOf(space) == kClockUnmeasured);
  CHECK_FALSE(ReadClockOffset(space).has_value());
}

TEST_CASE("a space without a Task Environment plane gets one with the record") {
  XSpace space;
  AlignSpaceClock(std::nullopt, &space);
  REQUIRE(FindPlane(space, kTaskEnvironmentPlaneName) != nullptr);
  CHECK(AlignmentOf(space) == kClockUnmeasured);
}

}  // namespace
}  // namespace xplane
}  // namespace neuronprof
