// Recording and reading back in the recorder tests: a capture stopped and
// its one thread's events, a recorded event's arguments.
#ifndef NEURONPROF_TESTS_CORE_RECORD_ARGS_H_
#define NEURONPROF_TESTS_CORE_RECORD_ARGS_H_

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/core/event_args.h"
#include "src/core/event_pool.h"
#include "src/core/recorder.h"

namespace neuronprof {
namespace testing {

// Room for every test's events: none dropped.
constexpr uint64_t kBigBuffer = uint64_t{64} << 20;

// Stops the running capture, which must succeed.
inline core::RecordedCapture Stop() {
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  return std::move(*capture);
}

// The events of a capture made on one thread.
inline const core::RecordsInPool& Events(const core::RecordedCapture& capture) {
  REQUIRE(capture.threads.size() == 1);
  return capture.threads[0].events;
}

// The int64 argument `key` of `record`, or -1 when it has none.
inline int64_t ArgInt(const internal::EventRecord& record, const std::string& key) {
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(record, &args);
  for (const auto& arg : args) {
    if (std::string(arg.key) == key) return arg.int_value;
  }
  return -1;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_CORE_RECORD_ARGS_H_
