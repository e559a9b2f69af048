// Records with the host recorder and returns the host plane, as a capture
// builds it: shared by the tests of markers, stacks and serving events.
#ifndef NEURONPROF_TESTS_HOST_PLANE_CAPTURE_H_
#define NEURONPROF_TESTS_HOST_PLANE_CAPTURE_H_

#include <catch2/catch.hpp>
#include <cstdint>

#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/recorder.h"

namespace neuronprof {
namespace testing {

// Runs `record` inside a kTrace-level host capture (4 MiB buffer) and
// returns its host plane. Call on the test's main thread (REQUIRE).
template <typename F>
tensorflow::profiler::XSpace CaptureHostPlane(F&& record) {
  REQUIRE(core::StartRecording(2, uint64_t{4} << 20).ok());
  record();
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  tensorflow::profiler::XSpace space;
  collectors::CollectStats stats;
  collectors::AddHostPlane(*capture, &space, &stats);
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_HOST_PLANE_CAPTURE_H_
