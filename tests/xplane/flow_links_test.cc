// xplane::LinkFlows: producers and consumers of a context matched as xprof
// matches them (type and id), every pair; a reused id past the cap links
// each consumer to the latest producer before it.
#include "src/xplane/flow_links.h"

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace {

constexpr int64_t kPsPerNs = 1000;

// "P<t>" produces and "C<t>" consumes (type, id) at t ns on two lines.
class Plane {
 public:
  Plane() : builder_(&plane_) {
    producers_ = builder_.AddLine(1, "producer", 0);
    consumers_ = builder_.AddLine(2, "consumer", 0);
  }
  void Produce(int64_t t_ns, int64_t type, uint64_t id) { Add(producers_, "P", t_ns, type, id); }
  void Consume(int64_t t_ns, int64_t type, uint64_t id) { Add(consumers_, "C", t_ns, type, id); }

  // "P<t>-C<t>" per link, in LinkFlows' order.
  std::vector<std::string> Links(size_t max_per_context = 4096) const {
    const xplane::PlaneVisitor plane(plane_);
    std::vector<std::string> out;
    for (const xplane::FlowLink& link : xplane::LinkFlows(plane, max_per_context)) {
      out.push_back("P" + std::to_string(link.producer.start_ns) + "-C" +
                    std::to_string(link.consumer.start_ns));
    }
    return out;
  }

 private:
  void Add(tensorflow::profiler::XLine* line, const char* name, int64_t t_ns, int64_t type,
           uint64_t id) {
    auto* event =
        builder_.AddEvent(line, builder_.EventMetadataId(name), t_ns * kPsPerNs, kPsPerNs);
    const bool producer = name[0] == 'P';
    builder_.AddStat(event, producer ? xplane::kProducerTypeStat : xplane::kConsumerTypeStat, type);
    builder_.AddStat(event, producer ? xplane::kProducerIdStat : xplane::kConsumerIdStat, id);
  }

  tensorflow::profiler::XPlane plane_;
  xplane::XPlaneBuilder builder_;
  tensorflow::profiler::XLine* producers_;
  tensorflow::profiler::XLine* consumers_;
};

TEST_CASE("flows link every producer of a (type, id) to every consumer of it") {
  Plane plane;
  plane.Produce(10, 0, 5);
  plane.Consume(20, 0, 5);
  plane.Consume(30, 0, 5);  // One to many.
  plane.Produce(11, 4, 5);  // Same id, another type: its own context.
  plane.Produce(12, 4, 5);  // Many to one.
  plane.Consume(40, 4, 5);
  plane.Produce(13, 0, 6);  // No consumer.
  plane.Consume(50, 0, 7);  // No producer.
  CHECK(plane.Links() == std::vector<std::string>{"P10-C20", "P10-C30", "P11-C40", "P12-C40"});
}

TEST_CASE("a reused id past the cap links each consumer to the latest producer before it") {
  Plane plane;
  for (int i = 0; i < 3; ++i) {
    plane.Produce(100 * i, 0, 9);
    plane.Consume(100 * i + 50, 0, 9);
  }
  plane.Consume(-5, 0, 9);            // Before every producer: no link.
  CHECK(plane.Links().size() == 12);  // 3 x 4 pairs under the cap.
  CHECK(plane.Links(4) == std::vector<std::string>{"P0-C50", "P100-C150", "P200-C250"});
}

TEST_CASE("many reused ids, each many to many, keep the links linear in the events") {
  Plane plane;
  const int ids = 500, per_side = 64;  // 64 x 64 = 4096 pairs each: under the per-id cap
  for (int id = 1; id <= ids; ++id) {
    for (int i = 0; i < per_side; ++i) {
      plane.Produce(id * 1000 + i, 0, id);
      plane.Consume(id * 1000 + 500 + i, 0, id);
    }
  }
  const auto links = plane.Links();
  // Each consumer keeps its latest producer: one link per consumer.
  CHECK(links.size() == static_cast<size_t>(ids * per_side));
  CHECK(links.size() <= xplane::kMaxLinksPerEnd * 2 * ids * per_side);
  CHECK(links[0] == "P1063-C1500");
  // A fan-out within the bound keeps every pair (1 x 9, 9 x 1, 16 x 16).
  Plane fan;
  for (int i = 0; i < 16; ++i) {
    fan.Produce(i, 0, 1);
    fan.Consume(100 + i, 0, 1);
  }
  CHECK(fan.Links().size() == 256);
}

TEST_CASE("context type names follow neuronprof::ContextType's enumerators") {
  CHECK(xplane::ContextTypeName(0) == "generic");
  CHECK(xplane::ContextTypeName(4) == "shared_batch_scheduler");
  CHECK(xplane::ContextTypeName(10) == "batcher");
  CHECK(xplane::ContextTypeName(99) == "context_99");
  CHECK(xplane::ContextTypeName(-1) == "context_-1");
}

}  // namespace
}  // namespace neuronprof
