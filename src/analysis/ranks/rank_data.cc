#include "src/analysis/ranks/rank_data.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "src/xplane/host_events.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

struct CommStatIds {
  explicit CommStatIds(const xplane::PlaneVisitor& plane)
      : collective(plane.StatId(xplane::kCollectiveStat)),
        seq(plane.StatId(xplane::kCommSeqStat)),
        comm_id(plane.StatId(xplane::kCommIdStat)),
        bytes(plane.StatId(xplane::kCommBytesStat)) {}
  int64_t collective, seq, comm_id, bytes;
};

bool IsEnqueue(const xplane::EventVisitor& event, const xplane::StepStatIds& step_ids,
               const CommStatIds& comm_ids) {
  return event.Stat(step_ids.framework).has_value() &&
         (event.Stat(comm_ids.collective).has_value() || event.Stat(comm_ids.comm_id).has_value());
}

// Start times of the line's collective calls (dispatcher enqueues,
// record_param_comms), ascending; `order` is the line's events by start.
std::vector<int64_t> EnqueueStarts(const xplane::LineVisitor& line, const std::vector<int>& order,
                                   const xplane::StepStatIds& step_ids,
                                   const CommStatIds& comm_ids) {
  std::vector<int64_t> starts;
  for (int index : order) {
    const xplane::EventVisitor event = line.Event(index);
    if (IsEnqueue(event, step_ids, comm_ids)) starts.push_back(event.OffsetPs());
  }
  return starts;
}

// Whether a call starts inside [start, end) (offsets on the same line).
bool EnclosesAny(const std::vector<int64_t>& sorted_starts, int64_t start, int64_t end) {
  const auto it = std::lower_bound(sorted_starts.begin(), sorted_starts.end(), start);
  return it != sorted_starts.end() && *it < end;
}

// One host line: steps, compute and communication spans, collectives.
void ReadLine(const xplane::LineVisitor& line, const xplane::StepStatIds& step_ids,
              const CommStatIds& comm_ids, RankData* rank, std::vector<Span>* compute,
              std::vector<Span>* comm, absl::flat_hash_map<int64_t, int64_t>* enqueues,
              std::vector<int64_t>* comm_id_of) {
  const int64_t line_ps = LineStartPs(line.TimestampNs());
  const std::vector<int> order = xplane::SortedEventIndices(line.raw());
  const std::vector<int64_t> enqueue_starts = EnqueueStarts(line, order, step_ids, comm_ids);
  int64_t comm_until = 0;  // End of the communication span the events are in.
  bool in_comm = false;
  for (int index : order) {
    const xplane::EventVisitor event = line.Event(index);
    if (event.DurationPs() <= 0 || xplane::IsMemoryEventName(event.Name())) continue;
    const int64_t start = SaturatingAdd(line_ps, event.OffsetPs());
    const int64_t end = SaturatingAdd(start, event.DurationPs());
    if (xplane::IsStepEvent(event, step_ids)) {
      const auto number = event.IntStat(step_ids.step_num);
      rank->steps.push_back({number.value_or(-1), std::string(event.Name()), start, end});
      continue;
    }
    const bool op = event.Stat(step_ids.framework).has_value();
    const auto collective = event.StrStat(comm_ids.collective);
    const auto comm_id = event.IntStat(comm_ids.comm_id);
    if (!op && collective) {  // A Work span.
      RankCollective work;
      work.op = std::string(event.DisplayName());  // the Work title
      work.collective = std::string(*collective);
      const auto seq = event.IntStat(comm_ids.seq);
      work.has_seq = seq.has_value();
      work.seq = seq.value_or(0);
      work.bytes = event.IntStat(comm_ids.bytes).value_or(0);
      work.arrival_ps = work.start_ps = start;
      work.end_ps = end;
      rank->collectives.push_back(std::move(work));
      comm_id_of->push_back(comm_id.value_or(0));
    } else if (op && (collective || comm_id)) {  // Enqueue, record_param_comms.
      if (comm_id) {
        auto [it, added] = enqueues->try_emplace(*comm_id, start);
        if (!added) it->second = std::min(it->second, start);
      }
    } else if (!(in_comm && start < comm_until)) {
      // A marker around a collective call ("allreduce_gradients") mostly
      // waits for it; the operators inside it still count.
      if (op || !EnclosesAny(enqueue_starts, event.OffsetPs(),
                             SaturatingAdd(event.OffsetPs(), event.DurationPs()))) {
        compute->push_back({start, end});
      }
      continue;
    } else {
      continue;  // Nested in communication.
    }
    comm->push_back({start, end});
    if (!in_comm || end > comm_until) comm_until = end;
    in_comm = true;
  }
}

}  // namespace

SpanUnion MergeSpans(std::vector<Span> spans) {
  std::sort(spans.begin(), spans.end(),
            [](const Span& a, const Span& b) { return a.start_ps < b.start_ps; });
  SpanUnion merged;
  for (const Span& s : spans) {
    if (s.end_ps <= s.start_ps) continue;
    if (!merged.empty() && s.start_ps <= merged.back().end_ps) {
      merged.back().end_ps = std::max(merged.back().end_ps, s.end_ps);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

SpanUnion IntersectSpans(const SpanUnion& a, const SpanUnion& b) {
  SpanUnion out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const int64_t s = std::max(a[i].start_ps, b[j].start_ps);
    const int64_t e = std::min(a[i].end_ps, b[j].end_ps);
    if (s < e) out.push_back({s, e});
    if (a[i].end_ps < b[j].end_ps) {
      ++i;
    } else {
      ++j;
    }
  }
  return out;
}

RankData ReadRankData(const tensorflow::profiler::XSpace& space, std::string file) {
  RankData rank;
  rank.file = std::move(file);
  rank.identity = xplane::ReadJobIdentity(space);
  rank.start_ns = xplane::ProfileStartEpochNs(space);
  rank.stop_ns = xplane::ProfileStopEpochNs(space);
  std::vector<Span> compute, comm;
  absl::flat_hash_map<int64_t, int64_t> enqueues;  // comm_id -> enqueue start
  std::vector<int64_t> comm_id_of;                 // per collective, 0: none
  for (const auto& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    const xplane::PlaneVisitor plane(raw);
    const xplane::StepStatIds step_ids(plane);
    const CommStatIds comm_ids(plane);
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      if (line.Id() >= xplane::kMemoryLineIdBase) return;  // Device memory pools.
      ReadLine(line, step_ids, comm_ids, &rank, &compute, &comm, &enqueues, &comm_id_of);
    });
  }
  for (size_t i = 0; i < rank.collectives.size(); ++i) {
    const auto it = enqueues.find(comm_id_of[i]);
    if (comm_id_of[i] != 0 && it != enqueues.end()) {
      rank.collectives[i].arrival_ps = std::min(rank.collectives[i].start_ps, it->second);
    }
  }
  std::stable_sort(
      rank.collectives.begin(), rank.collectives.end(),
      [](const RankCollective& a, const RankCollective& b) { return a.start_ps < b.start_ps; });
  std::stable_sort(rank.steps.begin(), rank.steps.end(),
                   [](const RankStep& a, const RankStep& b) { return a.start_ps < b.start_ps; });
  for (size_t i = 0; i < rank.steps.size(); ++i) {
    if (rank.steps[i].number < 0) rank.steps[i].number = static_cast<int64_t>(i);
  }
  rank.compute = MergeSpans(std::move(compute));
  rank.comm = MergeSpans(std::move(comm));
  return rank;
}

}  // namespace analysis
}  // namespace neuronprof
