// A summary of part of a capture: the events of a step range or a time
// window, as a copy of the XSpace that every report then reads.
#ifndef NEURONPROF_SRC_ANALYSIS_TIMELINE_SELECTION_H_
#define NEURONPROF_SRC_ANALYSIS_TIMELINE_SELECTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/statusor.h"
#include "proto/xplane.pb.h"

namespace neuronprof {
namespace analysis {

// At most one of the two.
struct Selection {
  // Step numbers (the step_num stat), both ends included.
  std::optional<std::pair<int64_t, int64_t>> steps;
  // Milliseconds after the capture's first event (on any plane), both ends
  // included.
  std::optional<std::pair<double, double>> window_ms;
  bool empty() const { return !steps && !window_ms; }
};

struct Selected {
  tensorflow::profiler::XSpace space;
  std::string description;  // "steps 3-5 (3 steps): 12.000-15.500 ms after ..."
  int64_t kept_events = 0, left_out_events = 0;
};

// Keeps the events that lie wholly inside the window: for `steps`, from the
// first selected step's start to the last one's end, leaving out steps of
// other numbers and the events nested in them (other threads' requests
// that ran meanwhile); for
// `window_ms`, the window. Planes, lines and metadata stay. NotFound when
// no step has a number in the range (naming the numbers there are);
// InvalidArgument for a range whose end is below its start or a negative
// window.
absl::StatusOr<Selected> Select(const tensorflow::profiler::XSpace& space,
                                const Selection& selection);

// "A-B" or "A" (= "A-A"): non-negative integers (steps) or numbers
// (milliseconds), A <= B; InvalidArgument saying what is wrong.
absl::StatusOr<std::pair<int64_t, int64_t>> ParseStepRange(std::string_view text);
absl::StatusOr<std::pair<double, double>> ParseWindowMs(std::string_view text);

}  // namespace analysis
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_ANALYSIS_TIMELINE_SELECTION_H_
