// The NTP-style offset estimate of the capture client's clock probe.
#include "src/rpc/clock_probe.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace neuronprof {
namespace rpc {
namespace {

TEST_CASE("the offset comes from the shortest round trip, uncertain by half of it") {
  // The server is 1 s ahead. Sample 2 has the shortest trip (100 ns) with
  // the server's read 30 ns after its midpoint; sample 1's long trip was
  // all on the way back.
  const std::vector<ClockSampleRtt> samples = {
      {1000, 1'000'000'100 + 1000, 11000},    // trip 10000
      {20000, 1'000'000'000 + 20080, 20100},  // trip 100, midpoint 20050
      {30000, 1'000'000'000 + 30400, 30500},  // trip 500
  };
  const auto offset = EstimateClockOffset(samples);
  REQUIRE(offset.has_value());
  CHECK(offset->offset_ns == 1'000'000'030);
  CHECK(offset->uncertainty_ns == 50);
  // The true offset (1 s) lies within the uncertainty.
  CHECK(std::abs(offset->offset_ns - 1'000'000'000) <= offset->uncertainty_ns);
}

TEST_CASE("a server behind the client has a negative offset") {
  const auto offset = EstimateClockOffset({{5000, 1000, 5011}});
  REQUIRE(offset.has_value());
  CHECK(offset->offset_ns == 1000 - 5005);
  CHECK(offset->uncertainty_ns == 6);  // An odd trip rounds up.
}

TEST_CASE("no usable sample gives no offset") {
  CHECK_FALSE(EstimateClockOffset({}).has_value());
  // The client's clock stepped back during the trip.
  CHECK_FALSE(EstimateClockOffset({{5000, 7000, 4000}}).has_value());
}

TEST_CASE("a server clock at the int64 ends or beyond any skew is refused, with why") {
  const int64_t now = 1'750'000'000'000'000'000;  // 2025, in ns since the epoch
  for (const int64_t server :
       {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
        now + kMaxClockOffsetNs + 1000, int64_t{0}}) {
    CAPTURE(server);
    std::string refused;
    CHECK_FALSE(EstimateClockOffset({{now, server, now + 100}}, &refused).has_value());
    CHECK(refused.find("beyond any plausible skew") != std::string::npos);
  }
  // A day off is a skew, not an error: aligned.
  std::string refused;
  const int64_t day = int64_t{24} * 3600 * 1000000000;
  const auto offset = EstimateClockOffset({{now, now + 50 + day, now + 100}}, &refused);
  REQUIRE(offset.has_value());
  CHECK(offset->offset_ns == day);
  CHECK(refused.empty());
  // The client's own extremes do not overflow the trip either.
  CHECK_FALSE(
      EstimateClockOffset(
          {{std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::max()}}, &refused)
          .has_value());
}

}  // namespace
}  // namespace rpc
}  // namespace neuronprof
