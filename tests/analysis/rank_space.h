// One rank of a synthetic distributed job, shaped like a kOperator capture
// of a DDP step over Gloo (collectors/torch): per 1000 us step on the
// "main" thread a forward op, the dispatcher enqueue c10d::allreduce_
// (comm_id, comm_seq), a backward op that overlaps the all_reduce, an
// optimizer op, a user marker "allreduce_gradients" around the blocking
// call (395..705, not compute); the all_reduce's Work span on a "gloo"
// worker thread. The straggler's forward runs late_us longer, so it arrives
// late_us after the others, who wait for it. Times in us from the step start:
//
//   rank           forward    enqueue      backward     all_reduce  optimizer
//   others         10..300    400..410     450..600     405..700    800..900
//   straggler      10..400    500..510     550..700     505..700    800..900
//
// Per step, others: compute 540, comm 300 (400..700), overlap 150, idle 310,
// waited 100; straggler: compute 640, comm 200, overlap 150, idle 310.
#ifndef NEURONPROF_TESTS_ANALYSIS_RANK_SPACE_H_
#define NEURONPROF_TESTS_ANALYSIS_RANK_SPACE_H_

#include <cstdint>
#include <string_view>

#include "proto/xplane.pb.h"
#include "src/xplane/job_identity.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"

namespace neuronprof {
namespace testing {

inline constexpr int64_t kRankEpochNs = 1'764'079'200'000'000'000;  // 2025-11-25 14:00 UTC
inline constexpr int64_t kRankStepUs = 1000;
inline constexpr int64_t kAllReduceBytes = 4 << 20;

struct RankSpaceOptions {
  int rank = 0;
  int world_size = 4;
  int steps = 3;
  int straggler = 3;
  int64_t late_us = 100;
  int64_t start_epoch_ns = kRankEpochNs;
  int64_t first_seq = 0;  // comm_seq of step 0's all_reduce
  int extra_ops = 0;      // 1 us ops nested in the forward (scale runs)
};

inline tensorflow::profiler::XSpace MakeRankSpace(const RankSpaceOptions& o) {
  using xplane::XPlaneBuilder;
  tensorflow::profiler::XSpace space;
  XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  auto* main_line = host.AddLine(100 + o.rank, "main", 0);
  auto* gloo_line = host.AddLine(200 + o.rank, "gloo", 0);
  constexpr int64_t kPs = 1000000;
  const int64_t late = o.rank == o.straggler ? o.late_us : 0;
  auto op = [&](auto* line, const char* name, int64_t start_us, int64_t end_us,
                const char* direction) {
    auto* e =
        host.AddEvent(line, host.EventMetadataId(name), start_us * kPs, (end_us - start_us) * kPs);
    host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
    host.AddStat(e, xplane::kOpDirectionStat, std::string_view(direction));
    return e;
  };
  for (int s = 0; s < o.steps; ++s) {
    const int64_t base = s * kRankStepUs;
    auto* step =
        host.AddEvent(main_line, host.EventMetadataId("train"), base * kPs, kRankStepUs * kPs);
    host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(step, xplane::kStepNumStat, int64_t{s});
    op(main_line, "aten::linear", base + 10, base + 300 + late, "fprop");
    for (int i = 0; i < o.extra_ops; ++i) {
      op(main_line, "aten::view", base + 12 + 2 * i, base + 13 + 2 * i, "fprop");
    }
    const int64_t seq = o.first_seq + s;
    const int64_t comm_id = s + 1;
    // A user marker around the blocking call (enqueue and wait): waiting,
    // not compute (the backward op inside it still is).
    host.AddEvent(main_line, host.EventMetadataId("allreduce_gradients"), (base + 395 + late) * kPs,
                  (310 - late) * kPs);
    auto* enqueue =
        op(main_line, "c10d::allreduce_", base + 400 + late, base + 410 + late, "fprop");
    host.AddStat(enqueue, xplane::kCommIdStat, comm_id);
    host.AddStat(enqueue, xplane::kCommSeqStat, seq);
    op(main_line, "aten::mul", base + 450 + late, base + 600 + late, "bprop");
    op(main_line, "aten::add_", base + 800, base + 900, "fprop");
    auto* work = host.AddEvent(gloo_line, host.EventMetadataId("gloo:all_reduce"),
                               (base + 405 + late) * kPs, (295 - late) * kPs);
    host.AddStat(work, xplane::kCollectiveStat, std::string_view("all_reduce"));
    host.AddStat(work, xplane::kCommBackendStat, std::string_view("gloo"));
    host.AddStat(work, xplane::kCommSeqStat, seq);
    host.AddStat(work, xplane::kCommIdStat, comm_id);
    host.AddStat(work, xplane::kCommBytesStat, kAllReduceBytes);
    host.AddStat(work, xplane::kWorldSizeStat, int64_t{o.world_size});
    // Gloo flattening the tensors inside the work: communication, not compute.
    op(gloo_line, "aten::cat", base + 410 + late, base + 420 + late, "fprop");
  }
  xplane::SetProfileTimes(&space, o.start_epoch_ns,
                          o.start_epoch_ns + o.steps * kRankStepUs * 1000);
  xplane::JobIdentity identity;
  identity.rank = o.rank;
  identity.world_size = o.world_size;
  identity.backend = "gloo";
  xplane::AddJobIdentity(identity, &space);
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_ANALYSIS_RANK_SPACE_H_
