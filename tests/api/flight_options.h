// FlightRecorderOptions for the flight recorder's tests: a small ring (1 MiB)
// writing into a test's folder under a fixed host name.
#ifndef NEURONPROF_TESTS_SESSION_FLIGHT_OPTIONS_H_
#define NEURONPROF_TESTS_SESSION_FLIGHT_OPTIONS_H_

#include <string>

#include "neuronprof/flight_recorder.h"

namespace neuronprof {
namespace testing {

inline FlightRecorderOptions FlightOptions(const std::string& logdir,
                                           const std::string& host_name) {
  FlightRecorderOptions options;
  options.logdir = logdir;
  options.host_name = host_name;
  options.ring_bytes = int64_t{1} << 20;
  return options;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_SESSION_FLIGHT_OPTIONS_H_
