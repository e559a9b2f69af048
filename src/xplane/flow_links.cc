#include "src/xplane/flow_links.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/xplane/schema.h"

namespace neuronprof {
namespace xplane {
namespace {

using Key = std::pair<int64_t, uint64_t>;  // (type, id)

struct Ends {
  std::vector<FlowEnd> producers;
  std::vector<FlowEnd> consumers;
};

bool StartsBefore(const FlowEnd& a, const FlowEnd& b) { return a.start_ns < b.start_ns; }

}  // namespace

std::vector<FlowLink> LinkFlows(const PlaneVisitor& plane, size_t max_links_per_context) {
  const int64_t producer_type = plane.StatId(kProducerTypeStat);
  const int64_t producer_id = plane.StatId(kProducerIdStat);
  const int64_t consumer_type = plane.StatId(kConsumerTypeStat);
  const int64_t consumer_id = plane.StatId(kConsumerIdStat);
  std::vector<FlowLink> links;
  if ((producer_id < 0) || (consumer_id < 0)) return links;
  std::map<Key, Ends> contexts;
  plane.ForEachLine([&](const LineVisitor& line) {
    line.ForEachEvent([&](const EventVisitor& event) {
      const auto produced = event.IntStat(producer_id);
      const auto consumed = event.IntStat(consumer_id);
      if (produced.value_or(0) == 0 && consumed.value_or(0) == 0) return;
      const auto time = event.Time();
      if (!time) return;
      const FlowEnd end{&line.raw(), &event.raw(), time->start_ns, time->end_ns()};
      if (produced.value_or(0) != 0) {
        const Key key{event.IntStat(producer_type).value_or(0), static_cast<uint64_t>(*produced)};
        contexts[key].producers.push_back(end);
      }
      if (consumed.value_or(0) != 0) {
        const Key key{event.IntStat(consumer_type).value_or(0), static_cast<uint64_t>(*consumed)};
        contexts[key].consumers.push_back(end);
      }
    });
  });
  for (auto& [key, ends] : contexts) {
    if (ends.producers.empty() || ends.consumers.empty()) continue;
    std::stable_sort(ends.producers.begin(), ends.producers.end(), StartsBefore);
    std::stable_sort(ends.consumers.begin(), ends.consumers.end(), StartsBefore);
    // Every pair, unless that is past the cap or many times the context's
    // ends (a crossbar of a reused id): so the links of all contexts stay
    // within kMaxLinksPerEnd times the flow events, whatever a file holds.
    const size_t pairs = ends.producers.size() * ends.consumers.size();
    const bool all_pairs =
        pairs <= max_links_per_context &&
        pairs <= kMaxLinksPerEnd * (ends.producers.size() + ends.consumers.size());
    for (const FlowEnd& consumer : ends.consumers) {
      if (all_pairs) {
        for (const FlowEnd& producer : ends.producers) {
          links.push_back({key.first, key.second, producer, consumer});
        }
        continue;
      }
      // The latest producer that started before the consumer, if any.
      auto after =
          std::upper_bound(ends.producers.begin(), ends.producers.end(), consumer, StartsBefore);
      if (after != ends.producers.begin()) {
        links.push_back({key.first, key.second, *std::prev(after), consumer});
      }
    }
  }
  std::stable_sort(links.begin(), links.end(), [](const FlowLink& a, const FlowLink& b) {
    return a.consumer.start_ns != b.consumer.start_ns ? a.consumer.start_ns < b.consumer.start_ns
                                                      : a.producer.start_ns < b.producer.start_ns;
  });
  return links;
}

std::string ContextTypeName(int64_t type) {
  static constexpr const char* kNames[] = {"generic",
                                           "legacy",
                                           "tf_executor",
                                           "tfrt_executor",
                                           "shared_batch_scheduler",
                                           "pjrt",
                                           "adaptive_shared_batch_scheduler",
                                           "tfrt_tpu_runtime",
                                           "tpu_embedding_engine",
                                           "gpu_launch",
                                           "batcher",
                                           "tpu_stream",
                                           "tpu_launch",
                                           "pathways_executor",
                                           "pjrt_library_call",
                                           "threadpool_event"};
  if (type >= 0 && type < static_cast<int64_t>(std::size(kNames))) return kNames[type];
  return absl::StrCat("context_", type);
}

}  // namespace xplane
}  // namespace neuronprof
