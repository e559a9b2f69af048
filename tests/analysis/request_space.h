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
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

inline constexpr int64_t kUs = 1000000;          // picoseconds
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

// A serving capture with flows (request_space's timing without the
// workers' steps): request i (id i + 1) is a step "request" (number i) on
// "client" that holds an `enqueue` producer (100 us, context type 1, id
// i + 1) and waits for the reply; its consumer `infer` (2 ms + jitter,
// holding "matmul") starts on "worker-<i % 4 + 1>" 1 ms after enqueue
// ends (+ `delay_us` for the requests in `slow`), and the step ends 250 us
// after infer. An async span "request" on track "requests", id i + 1,
// covers the step. The counter "queue_depth" is 1 from enqueue's end to
// infer's start, else 0; every 10th request has an instant "cache_miss".
// With `delay_in_infer` the slow requests' infer takes the delay instead.
inline tensorflow::profiler::XSpace MakeFlowSpace(int requests, const std::vector<int>& slow,
                                                  int64_t delay_us, bool delay_in_infer = false) {
  tensorflow::profiler::XSpace space;
  auto* plane = xplane::FindOrAddPlane(&space, xplane::kHostPlaneName);
  xplane::XPlaneBuilder host(plane);
  auto* client = host.AddLine(1, "client", 0);
  auto* counters = host.AddLine(xplane::kCounterLineId, xplane::kCounterLineName, 0);
  auto* track = host.AddLine(xplane::kAsyncLineIdBase, "requests", 0);
  tensorflow::profiler::XLine* workers[4];
  for (int w = 0; w < 4; ++w) {
    workers[w] = host.AddLine(10 + w, "worker-" + std::to_string(w + 1), 0);
  }
  const int64_t cache_miss = host.EventMetadataId("cache_miss");
  auto* instant = (*plane->mutable_event_metadata())[cache_miss].add_stats();
  instant->set_metadata_id(host.StatMetadataId(xplane::kInstantStat));
  instant->set_int64_value(1);
  for (int i = 0; i < requests; ++i) {
    const uint64_t id = static_cast<uint64_t>(i) + 1;
    const bool is_slow = std::find(slow.begin(), slow.end(), i) != slow.end();
    const int64_t t = 1000 + int64_t{i} * kRequestGapUs;
    const int64_t delay = is_slow ? delay_us : 0;
    const int64_t infer_at = t + 100 + 1000 + (delay_in_infer ? 0 : delay);
    const int64_t infer = 2000 + InferJitterUs(i, false) + (delay_in_infer ? delay : 0);
    const int64_t end = infer_at + infer + 250;
    auto* step = host.AddEvent(client, host.EventMetadataId("request"), t * kUs, (end - t) * kUs);
    host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(step, xplane::kStepNumStat, int64_t{i});
    auto* enqueue = host.AddEvent(client, host.EventMetadataId("enqueue"), t * kUs, 100 * kUs);
    host.AddStat(enqueue, xplane::kProducerTypeStat, int64_t{1});
    host.AddStat(enqueue, xplane::kProducerIdStat, id);
    if (i % 10 == 0) host.AddEvent(client, cache_miss, (t + 50) * kUs, 0);
    auto* worker = workers[i % 4];
    auto* consumer =
        host.AddEvent(worker, host.EventMetadataId("infer"), infer_at * kUs, infer * kUs);
    host.AddStat(consumer, xplane::kConsumerTypeStat, int64_t{1});
    host.AddStat(consumer, xplane::kConsumerIdStat, id);
    host.AddEvent(worker, host.EventMetadataId("matmul"), (infer_at + 100) * kUs, 1500 * kUs);
    auto* span = host.AddEvent(track, host.EventMetadataId("request"), t * kUs, (end - t) * kUs);
    host.AddStat(span, xplane::kAsyncIdStat, id);
    auto* up = host.AddEvent(counters, host.EventMetadataId("queue_depth"), (t + 100) * kUs, 0);
    host.AddStat(up, xplane::kCounterValueStat, int64_t{1});
    auto* down = host.AddEvent(counters, host.EventMetadataId("queue_depth"), infer_at * kUs, 0);
    host.AddStat(down, xplane::kCounterValueStat, int64_t{0});
  }
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_ANALYSIS_REQUEST_SPACE_H_
