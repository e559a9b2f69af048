// Core reports failures as core::Result (libneuronprof_markers has no
// Abseil); the modules above it must hand users the absl::Status they got
// before: the same code and, byte for byte, the same message.
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "src/collectors/collector.h"
#include "src/collectors/core_status.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"
#include "src/session/flight_session.h"
#include "src/session/slow_step_trigger.h"

namespace neuronprof {
namespace {

TEST_CASE("ToStatus keeps core's code and message") {
  CHECK(collectors::ToStatus(core::Result<>()).ok());
  const struct {
    core::ErrorCode code;
    absl::StatusCode want;
  } cases[] = {
      {core::ErrorCode::kInvalidArgument, absl::StatusCode::kInvalidArgument},
      {core::ErrorCode::kResourceExhausted, absl::StatusCode::kResourceExhausted},
      {core::ErrorCode::kFailedPrecondition, absl::StatusCode::kFailedPrecondition},
  };
  for (const auto& c : cases) {
    const absl::Status status = collectors::ToStatus(core::Result<>(c.code, "why: 42"));
    CHECK(status.code() == c.want);
    CHECK(status.message() == "why: 42");
  }
}

TEST_CASE("the host collector's start and stop failures read as before") {
  collectors::CollectorOptions options;
  options.max_buffer_bytes = uint64_t{4} << 20;
  std::unique_ptr<collectors::Collector> host = collectors::CreateHostCollector(options);
  CHECK(host->Stop().ToString() == "FAILED_PRECONDITION: no capture is running");
  REQUIRE(core::StartRecording(2, options.max_buffer_bytes).ok());
  CHECK(host->Start().ToString() ==
        "FAILED_PRECONDITION: a capture is already running in this process; stop it "
        "first (only one capture at a time)");
  REQUIRE(host->Stop().ok());  // Stops the capture started above.

  options.host_tracer_level = 7;
  CHECK(collectors::CreateHostCollector(options)->Start().ToString() ==
        "INVALID_ARGUMENT: host_tracer_level must be 0..3, got 7");
}

TEST_CASE("a flight session's ring and snapshot failures read as before") {
  auto small = session::FlightSession::Start(2, core::kBlockBytes, "core_errors_test");
  CHECK(small.status().ToString() ==
        "INVALID_ARGUMENT: the ring must hold at least 4 blocks of 65536 bytes (262144 "
        "bytes), got 65536");

  auto flight = session::FlightSession::Start(2, core::kMinRingBytes, "core_errors_test");
  REQUIRE(flight.ok());
  CHECK((*flight)->Snapshot(-1, "").status().ToString() ==
        "INVALID_ARGUMENT: last_ms must be >= 0 (0 = everything retained), got -1");
  CHECK((*flight)->SnapshotForStreaming(-1, "").status().ToString() ==
        "INVALID_ARGUMENT: last_ms must be >= 0 (0 = everything retained), got -1");
}

TEST_CASE("a second step watch's failure reads as before") {
  auto first = session::SlowStepTriggers::Start([](const session::SlowStep&) {});
  REQUIRE(first.ok());
  auto second = session::SlowStepTriggers::Start([](const session::SlowStep&) {});
  CHECK(second.status().ToString() == "FAILED_PRECONDITION: a step watch is already installed");
}

}  // namespace
}  // namespace neuronprof
