// A synthetic serving capture: `requests` steps named "request" (numbered
// 0..requests-1) spread round-robin over the lines "worker-1".."worker-4",
// each made of queue_wait (1 ms), infer (2 ms, holding "matmul" 1.5 ms)
// and respond (0.25 ms) with 0.25 ms of the request's own time (self)
// around them; jitter of 0..40 us (i % 5 * 10 us) in infer, or with
// `irregular` 0..996 us ((i * 7919) % 997 us). Requests listed
// in `slow` spend `delay_us` more in queue_wait. One "startup" marker on
// "main". Times are picoseconds on lines starting at 0.
#ifndef NEURONPROF_TESTS_ANALYSIS_REQUEST_SPACE_H_
#define NEURONPROF_TESTS_ANALYSIS_REQUEST_SPACE_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/xplane/names.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

inline constexpr int64_t kUs = 1000000;  // picoseconds
inline constexpr int64_t kRequestGapUs = 50000;  // 50 ms between request starts

inline int64_t InferJitterUs(int i, bool irregular) {
  return irregular ? int64_t{i} * 7919 % 997 : i % 5 * 10;
}

inline tensorflow::profiler::XSpace MakeRequestSpace(int requests, const std::vector<int>& slow,
                                                     int64_t delay_us, bool irregular = false) {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* main_line = host.AddLine(1, "main", 0);
  host.AddEvent(main_line, host.EventMetadataId("startup"), 0, 500 * kUs);
  tensorflow::profiler::XLine* workers[4];
  for (int w = 0; w < 4; ++w) {
    workers[w] = host.AddLine(10 + w, "worker-" + std::to_string(w + 1), 0);
  }
  for (int i = 0; i < requests; ++i) {
    auto* line = workers[i % 4];
    const bool is_slow = std::find(slow.begin(), slow.end(), i) != slow.end();
    const int64_t wait = 1000 + (is_slow ? delay_us : 0);
    const int64_t infer = 2000 + InferJitterUs(i, irregular);
    int64_t t = 1000 + int64_t{i} * kRequestGapUs;  // after startup
    const int64_t total = 125 + wait + infer + 250 + 125;
    auto* request = host.AddEvent(line, host.EventMetadataId("request"), t * kUs, total * kUs);
    host.AddStat(request, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(request, xplane::kStepNumStat, int64_t{i});
    t += 125;
    host.AddEvent(line, host.EventMetadataId("queue_wait"), t * kUs, wait * kUs);
    t += wait;
    host.AddEvent(line, host.EventMetadataId("infer"), t * kUs, infer * kUs);
    host.AddEvent(line, host.EventMetadataId("matmul"), (t + 100) * kUs, 1500 * kUs);
    t += infer;
    host.AddEvent(line, host.EventMetadataId("respond"), t * kUs, 250 * kUs);
  }
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_ANALYSIS_REQUEST_SPACE_H_
