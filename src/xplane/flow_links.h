// Flows between threads (neuronprof::TraceProducer / TraceConsumer, TSL's
// TraceMeProducer / TraceMeConsumer): the stats _pt/_p and _ct/_c on a
// plane's events, matched by (context type, context id). Read by the
// exporters (Chrome and Kineto flow events) and the analysis.
#ifndef NEURONPROF_SRC_XPLANE_FLOW_LINKS_H_
#define NEURONPROF_SRC_XPLANE_FLOW_LINKS_H_

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace xplane {

// One end of a flow: an event and where it sits.
struct FlowEnd {
  const tensorflow::profiler::XLine* line = nullptr;
  const tensorflow::profiler::XEvent* event = nullptr;
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// A producer and a consumer of one context.
struct FlowLink {
  int64_t context_type = 0;
  uint64_t context_id = 0;
  FlowEnd producer;
  FlowEnd consumer;
};

// Every (producer, consumer) pair of `plane` with the same context type and
// id (id 0 links nothing), as xprof links them: one producer to many
// consumers, many producers to one consumer. Ordered by consumer start,
// then producer start. A context with more than `max_links_per_context`
// pairs, or more than kMaxLinksPerEnd times its producers and consumers (a
// reused id linking many to many), keeps, for each consumer, only the
// latest producer that started before it: the links of a plane are at
// most kMaxLinksPerEnd times its flow events. Events whose times do not
// fit are left out.
inline constexpr size_t kMaxLinksPerEnd = 8;
std::vector<FlowLink> LinkFlows(const PlaneVisitor& plane, size_t max_links_per_context = 4096);

// A context type's name: neuronprof::ContextType's enumerator in snake case
// ("generic", "shared_batch_scheduler", ...); "context_<n>" for others.
std::string ContextTypeName(int64_t type);

}  // namespace xplane
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_FLOW_LINKS_H_
