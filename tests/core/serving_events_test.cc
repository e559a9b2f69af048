// Flows, async spans, counters and instants (neuronprof/trace_events.h):
// what the recorder keeps and where the host plane puts it (the names in
// docs/ARCHITECTURE.md, "Serving events"), in a capture and in a flight
// recorder's ring snapshot.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/event_args.h"
#include "src/core/recorder.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/host_plane_capture.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;

// Every event of the host plane named `name`, with its line.
std::vector<std::pair<xplane::LineVisitor, xplane::EventVisitor>> Events(
    const xplane::PlaneVisitor& plane, std::string_view name) {
  std::vector<std::pair<xplane::LineVisitor, xplane::EventVisitor>> found;
  plane.ForEachLine([&](const xplane::LineVisitor& line) {
    line.ForEachEvent([&](const xplane::EventVisitor& event) {
      if (event.Name() == name) found.emplace_back(line, event);
    });
  });
  return found;
}

TEST_CASE("producers and consumers carry TSL's _pt/_p and _ct/_c stats on their own threads") {
  uint64_t produced = 0;
  const XSpace space = testing::CaptureHostPlane([&] {
    {
      TraceProducer producer("enqueue", ContextType::kSharedBatchScheduler);
      produced = producer.context_id();
    }
    std::thread worker([&] {
      TraceConsumer consumer("run_batch", ContextType::kSharedBatchScheduler, produced);
      TraceConsumer unlinked("no_context", ContextType::kGeneric, 0);
      TraceProducer given("reply", ContextType::kGeneric, 77, {{"size", 3}});
    });
    worker.join();
  });
  CHECK(produced != 0);
  const xplane::PlaneVisitor plane(space.planes(0));
  const auto enqueue = Events(plane, "enqueue");
  const auto run = Events(plane, "run_batch");
  REQUIRE(enqueue.size() == 1);
  REQUIRE(run.size() == 1);
  CHECK(enqueue[0].first.Id() != run[0].first.Id());  // Two threads' lines.
  const xplane::EventVisitor& p = enqueue[0].second;
  CHECK(p.IntStatNamed(xplane::kProducerTypeStat) == 4);
  CHECK(p.StatNamed(xplane::kProducerIdStat)->raw().uint64_value() == produced);
  CHECK_FALSE(p.StatNamed(xplane::kConsumerIdStat).has_value());
  const xplane::EventVisitor& c = run[0].second;
  CHECK(c.IntStatNamed(xplane::kConsumerTypeStat) == 4);
  CHECK(c.StatNamed(xplane::kConsumerIdStat)->raw().uint64_value() == produced);
  // A consumer of id 0 is a plain marker; a given id is kept, with args.
  const auto plain = Events(plane, "no_context");
  REQUIRE(plain.size() == 1);
  CHECK(plain[0].second.raw().stats_size() == 0);
  const auto reply = Events(plane, "reply");
  REQUIRE(reply.size() == 1);
  CHECK(reply[0].second.StatNamed(xplane::kProducerIdStat)->raw().uint64_value() == 77);
  CHECK(reply[0].second.IntStatNamed("size") == 3);
}

// std::string_view{} holds a null pointer: every name path must copy it
// without reading it (memcpy from null is undefined even for 0 bytes; the
// ASan/UBSan stage runs this), and record the event with an empty name.
TEST_CASE("an empty name (a null string_view) is recorded on every marker kind") {
  const std::string_view empty;
  REQUIRE(empty.data() == nullptr);
  const uint64_t ids[] = {5, 6};
  const XSpace space = testing::CaptureHostPlane([&] {
    { ScopedTrace scope(empty); }
    { ScopedTrace scope(empty, Arg("k", 1)); }
    { ScopedTrace scope(empty, {{"k", 1}}); }
    { TraceProducer producer(empty, ContextType::kGeneric, 5); }
    { TraceProducer producer(empty, ContextType::kGeneric, 6, Arg("k", 1)); }
    { TraceConsumer consumer(empty, ContextType::kGeneric, 5); }
    { TraceConsumer consumer(empty, ContextType::kGeneric, 6, Arg("k", 1)); }
    { TraceBatchConsumer batch(empty, ContextType::kGeneric, ids, 2); }
    TraceCounter(empty, int64_t{3});
    TraceCounter(empty, 1.5);
    TraceInstant(empty);
    TraceInstant(empty, Arg("k", 1));
    { StepTrace step(empty, 1); }
  });
  int64_t events = 0;
  const xplane::PlaneVisitor plane(space.planes(0));
  plane.ForEachLine([&](const xplane::LineVisitor& line) {
    line.ForEachEvent([&](const xplane::EventVisitor& event) {
      if (event.Name().empty()) ++events;
    });
  });
  // 13 markers, and the batch consumer's two links.
  CHECK(events == 15);
}

TEST_CASE("a batch consumer records its marker and, nested in it, one link per id") {
  // In a capture and in a flight recorder's ring (whose name check keeps
  // the links: each reads the clock after its name is copied).
  for (const bool ring : {false, true}) {
    INFO("ring " << ring);
    if (ring) {
      REQUIRE(core::StartRingRecording(2, 8 * core::kBlockBytes).ok());
    } else {
      REQUIRE(core::StartRecording(2, uint64_t{4} << 20).ok());
    }
    {
      const uint64_t ids[] = {11, 0, 12, 13};  // 0 links nothing
      TraceBatchConsumer batch("assemble", ContextType::kBatcher, ids, 4);
    }
    auto capture = ring ? core::SnapshotRing() : core::StopRecording();
    REQUIRE(capture.ok());
    if (ring) REQUIRE(core::StopRecording().ok());
    XSpace space;
    collectors::CollectStats stats;
    collectors::AddHostPlane(*capture, &space, &stats);
    const xplane::PlaneVisitor plane(space.planes(0));
    const auto events = Events(plane, "assemble");
    REQUIRE(events.size() == 4);
    std::vector<int64_t> linked;
    const xplane::EventVisitor* marker = nullptr;
    for (const auto& [line, event] : events) {
      if (!event.StatNamed(xplane::kConsumerIdStat)) {
        marker = &event;
        continue;
      }
      CHECK(event.DurationPs() == 0);
      CHECK(event.IntStatNamed(xplane::kConsumerTypeStat) == 10);
      linked.push_back(*event.IntStatNamed(xplane::kConsumerIdStat));
    }
    REQUIRE(marker != nullptr);
    CHECK(marker->raw().stats_size() == 0);
    CHECK(linked == std::vector<int64_t>{11, 12, 13});
    for (const auto& [line, event] : events) {  // nested in the marker
      CHECK(event.OffsetPs() >= marker->OffsetPs());
      CHECK(event.OffsetPs() <= marker->OffsetPs() + marker->DurationPs());
    }
  }
}

TEST_CASE("a producer outside a capture records nothing and hands out its given id") {
  TraceProducer outside("enqueue", ContextType::kGeneric, 5);
  CHECK(outside.context_id() == 5);
  TraceProducer generated("enqueue");
  CHECK(generated.context_id() == 0);  // Not recorded: no id generated.
}

TEST_CASE("context ids are unique across threads and never 0") {
  std::vector<uint64_t> ids;
  for (int i = 0; i < 1000; ++i) ids.push_back(NewContextId());
  std::vector<uint64_t> other;
  std::thread([&] {
    for (int i = 0; i < 1000; ++i) other.push_back(NewContextId());
  }).join();
  std::set<uint64_t> all(ids.begin(), ids.end());
  all.insert(other.begin(), other.end());
  CHECK(all.size() == 2000);
  CHECK(all.count(0) == 0);
}

TEST_CASE("an async span begun on one thread and ended on another lands on its track's line") {
  uint64_t first_id = 0;
  const XSpace space = testing::CaptureHostPlane([&] {
    AsyncTrace first("requests", "request");
    AsyncTrace second("requests", "request", 1234);  // Overlaps the first.
    first_id = first.id();
    AsyncTrace moved = std::move(first);
    CHECK_FALSE(first.recording());
    std::thread([&] { moved.End(); }).join();
    moved.End();                                                         // Once only.
    std::thread([s = std::move(second)]() mutable { (void)s; }).join();  // Destructor ends it.
    AsyncTrace later("requests", "request");  // After both: back on lane 0.
    AsyncTrace other("batches", "batch");
  });
  CHECK(first_id != 0);
  const xplane::PlaneVisitor plane(space.planes(0));
  const auto requests = Events(plane, "request");
  REQUIRE(requests.size() == 3);
  std::set<int64_t> lines;
  for (const auto& [line, event] : requests) {
    CHECK(xplane::IsAsyncLineId(line.Id()));
    CHECK_FALSE(xplane::IsThreadLineId(line.Id()));
    CHECK(line.Name() == "requests");
    CHECK(line.DisplayId() >= xplane::kAsyncLineDisplayIdBase);
    lines.insert(line.Id());
  }
  CHECK(lines.size() == 2);  // Two overlapping spans: two lanes.
  // Lane by lane, in time order: first and later share lane 0.
  const auto id_of = [&](size_t i) {
    return requests[i].second.StatNamed(xplane::kAsyncIdStat)->raw().uint64_value();
  };
  CHECK(id_of(0) == first_id);
  CHECK(requests[1].first.Id() == requests[0].first.Id());
  CHECK(id_of(2) == 1234);
  CHECK(requests[2].first.Id() != requests[0].first.Id());
  CHECK(requests[0].second.DurationPs() > 0);
  // No reserved key leaks as a stat.
  CHECK(plane.StatId(std::string(internal::kAsyncTrackKey)) < 0);
  CHECK(plane.StatId(std::string(internal::kAsyncIdKey)) < 0);
  const auto batches = Events(plane, "batch");
  REQUIRE(batches.size() == 1);
  CHECK(batches[0].first.Name() == "batches");
  CHECK(batches[0].first.Id() != requests[0].first.Id());
}

TEST_CASE("typed arguments of an async span's end, a producer and an instant are their stats") {
  const XSpace space = testing::CaptureHostPlane([] {
    AsyncTrace life("requests", "request", 31);
    std::thread([&] { life.End(Arg("status", 200), Arg("route", "/v1")); }).join();
    TraceProducer p("enqueue", ContextType::kGeneric, 32, Arg("batch", 8));
    TraceInstant("cache_miss", Arg("key", "user:7"));
  });
  const xplane::PlaneVisitor plane(space.planes(0));
  const auto requests = Events(plane, "request");
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].first.Name() == "requests");
  const xplane::EventVisitor& span = requests[0].second;
  CHECK(span.StatNamed(xplane::kAsyncIdStat)->raw().uint64_value() == 31);
  CHECK(span.IntStatNamed("status") == 200);
  CHECK(span.StrStatNamed("route") == "/v1");
  const auto enqueue = Events(plane, "enqueue");
  REQUIRE(enqueue.size() == 1);
  CHECK(enqueue[0].second.StatNamed(xplane::kProducerIdStat)->raw().uint64_value() == 32);
  CHECK(enqueue[0].second.IntStatNamed("batch") == 8);
  const auto miss = Events(plane, "cache_miss");
  REQUIRE(miss.size() == 1);
  CHECK(miss[0].second.DurationPs() == 0);
  CHECK(miss[0].second.IntStatNamed(xplane::kInstantStat) == 1);
  CHECK(miss[0].second.StrStatNamed("key") == "user:7");
}

TEST_CASE("counters go to the _counters_ line in time order; instants stay on their thread") {
  const XSpace space = testing::CaptureHostPlane([] {
    TraceCounter("queue_depth", 3);
    std::thread([] { TraceCounter("queue_depth", uint64_t{5}); }).join();
    TraceCounter("load", 0.25);
    ScopedTrace outer("serve");
    TraceInstant("cache_miss", {{"key", "user:7"}});
    TraceInstant("rejected");
  });
  const xplane::PlaneVisitor plane(space.planes(0));
  const auto depth = Events(plane, "queue_depth");
  REQUIRE(depth.size() == 2);
  CHECK(depth[0].first.Id() == xplane::kCounterLineId);
  CHECK(depth[0].first.Name() == xplane::kCounterLineName);
  CHECK(depth[0].second.IntStatNamed(xplane::kCounterValueStat) == 3);
  CHECK(depth[1].second.StatNamed(xplane::kCounterValueStat)->raw().uint64_value() == 5);
  CHECK(depth[0].second.OffsetPs() <= depth[1].second.OffsetPs());
  const auto load = Events(plane, "load");
  REQUIRE(load.size() == 1);
  CHECK(load[0].second.StatNamed(xplane::kCounterValueStat)->raw().double_value() == 0.25);
  CHECK(load[0].second.DurationPs() == 0);

  const auto serve = Events(plane, "serve");
  const auto miss = Events(plane, "cache_miss");
  const auto rejected = Events(plane, "rejected");
  REQUIRE(serve.size() == 1);
  REQUIRE(miss.size() == 1);
  REQUIRE(rejected.size() == 1);
  CHECK(miss[0].first.Id() == serve[0].first.Id());
  CHECK(miss[0].second.DurationPs() == 0);
  CHECK(miss[0].second.StrStatNamed("key") == "user:7");
  CHECK(miss[0].second.IntStatNamed(xplane::kInstantStat) == 1);  // On its metadata.
  CHECK(miss[0].second.raw().stats_size() == 1);
  CHECK(rejected[0].second.IntStatNamed(xplane::kInstantStat) == 1);
  CHECK_FALSE(serve[0].second.StatNamed(xplane::kInstantStat).has_value());
  CHECK(plane.StatId(std::string(internal::kCounterValueKey)) < 0);
  CHECK(plane.StatId(std::string(internal::kInstantKey)) < 0);
}

TEST_CASE("a flight recorder's ring snapshot carries flows, async spans, counters, instants") {
  REQUIRE(core::StartRingRecording(2, 8 * core::kBlockBytes).ok());
  AsyncTrace request("requests", "request");
  uint64_t id = 0;
  {
    TraceProducer producer("enqueue");
    id = producer.context_id();
  }
  std::thread([&] {
    TraceConsumer consumer("infer", ContextType::kGeneric, id);
    // Fill names blocks between the span's begin and its end: the name is
    // copied at the end, so the ring's recycling check must still keep it.
    for (int i = 0; i < 1000; ++i) ScopedTrace filler(std::string("filler") + "_x");
    request.End();
  }).join();
  TraceCounter("queue_depth", 1);
  TraceInstant("cache_miss");
  auto snapshot = core::SnapshotRing();
  REQUIRE(snapshot.ok());
  REQUIRE(core::StopRecording().ok());
  CHECK(snapshot->clipped == 0);
  XSpace space;
  collectors::CollectStats stats;
  collectors::AddHostPlane(*snapshot, &space, &stats);
  const xplane::PlaneVisitor plane(space.planes(0));
  REQUIRE(Events(plane, "request").size() == 1);
  CHECK(Events(plane, "request")[0].first.Name() == "requests");
  REQUIRE(Events(plane, "infer").size() == 1);
  CHECK(Events(plane, "infer")[0].second.IntStatNamed(xplane::kConsumerIdStat) ==
        static_cast<int64_t>(id));
  CHECK(Events(plane, "queue_depth").size() == 1);
  CHECK(Events(plane, "cache_miss").size() == 1);
}

TEST_CASE("an async span that ends after its capture records nothing") {
  REQUIRE(core::StartRecording(2, uint64_t{4} << 20).ok());
  AsyncTrace request("requests", "request");
  CHECK(request.recording());
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  REQUIRE(core::StartRecording(2, uint64_t{4} << 20).ok());
  request.End();  // Begun in the previous capture: not recorded in this one.
  auto next = core::StopRecording();
  REQUIRE(next.ok());
  CHECK(next->threads.empty());
}

}  // namespace
}  // namespace neuronprof
