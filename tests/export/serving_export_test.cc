// Flows, async spans, counters and instants in the Chrome trace and the
// Kineto trace, from a real capture: flow pairs bound to the producer and
// consumer slices, async "b"/"e" pairs, "C" counters, "i" instants, all in
// strict JSON.
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "tests/export/strict_json.h"
#include "tests/export/trace_text.h"
#include "tests/host_plane_capture.h"

namespace neuronprof {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

// One request produced on the main thread and consumed twice on a worker
// (one to many); two requests produced with one batch id and consumed once
// (many to one); an async span across the two threads; counters; instants.
void RecordServing() {
  uint64_t request = 0;
  {
    TraceProducer producer("accept");
    request = producer.context_id();
  }
  constexpr uint64_t kBatch = 99;
  { TraceProducer first("add_to_batch", ContextType::kSharedBatchScheduler, kBatch); }
  { TraceProducer second("add_to_batch", ContextType::kSharedBatchScheduler, kBatch); }
  AsyncTrace life("requests", "request");
  TraceCounter("queue_depth", 2);
  TraceCounter("queue_depth", 0.5);
  std::thread([&] {
    { TraceConsumer infer("infer", ContextType::kGeneric, request); }
    { TraceConsumer reply("reply", ContextType::kGeneric, request); }
    { TraceConsumer run("run_batch", ContextType::kSharedBatchScheduler, kBatch); }
    ScopedTrace around("serve");
    TraceInstant("cache_miss", {{"key", "k7"}});
    life.End();
  }).join();
}

tensorflow::profiler::XSpace ServingSpace() { return testing::CaptureHostPlane(RecordServing); }

std::vector<const Struct*> Events(const Struct& root, const std::string& ph) {
  std::vector<const Struct*> found;
  for (const Value& value : root.fields().at("traceEvents").list_value().values()) {
    const auto& fields = value.struct_value().fields();
    if (fields.at("ph").string_value() == ph) found.push_back(&value.struct_value());
  }
  return found;
}

std::string Str(const Struct* event, const char* key) {
  return event->fields().at(key).string_value();
}
double Num(const Struct* event, const char* key) { return event->fields().at(key).number_value(); }

// The complete event on thread `tid` that starts at `ts` (the slice a flow
// end binds to), by name.
std::string SliceAt(const Struct& root, double tid, double ts) {
  for (const Struct* event : Events(root, "X")) {
    if (Num(event, "tid") == tid && Num(event, "ts") == ts) return Str(event, "name");
  }
  return "";
}

// Flow id -> (producer slice, consumer slice), for flows of category `cat`.
std::multimap<std::string, std::string> FlowPairs(const Struct& root, const std::string& cat) {
  std::map<double, std::string> starts, finishes;
  for (const Struct* s : Events(root, "s")) {
    if (Str(s, "cat") == cat) starts[Num(s, "id")] = SliceAt(root, Num(s, "tid"), Num(s, "ts"));
  }
  for (const Struct* f : Events(root, "f")) {
    if (Str(f, "cat") != cat) continue;
    CHECK(Str(f, "bp") == "e");  // Bound to the enclosing slice.
    finishes[Num(f, "id")] = SliceAt(root, Num(f, "tid"), Num(f, "ts"));
  }
  std::multimap<std::string, std::string> pairs;
  for (const auto& [id, producer] : starts) {
    auto finish = finishes.find(id);
    REQUIRE(finish != finishes.end());  // Every "s" has its "f".
    pairs.emplace(producer, finish->second);
  }
  CHECK(finishes.size() == starts.size());
  return pairs;
}

TEST_CASE("Chrome trace: flows pair producers with consumers, one to many and many to one") {
  const Struct root = testing::ParseStrictJson(testing::ChromeTraceText(ServingSpace()));
  const auto generic = FlowPairs(root, "generic");
  CHECK(generic ==
        std::multimap<std::string, std::string>{{"accept", "infer"}, {"accept", "reply"}});
  const auto batch = FlowPairs(root, "shared_batch_scheduler");
  CHECK(batch == std::multimap<std::string, std::string>{{"add_to_batch", "run_batch"},
                                                         {"add_to_batch", "run_batch"}});
}

TEST_CASE("Chrome trace: async spans are b/e pairs, counters C, instants i") {
  const Struct root = testing::ParseStrictJson(testing::ChromeTraceText(ServingSpace()));
  const auto begins = Events(root, "b");
  const auto ends = Events(root, "e");
  REQUIRE(begins.size() == 1);
  REQUIRE(ends.size() == 1);
  CHECK(Str(begins[0], "cat") == "requests");
  CHECK(Str(begins[0], "name") == "request");
  CHECK(Str(ends[0], "name") == "request");
  CHECK(Str(begins[0], "id") == Str(ends[0], "id"));
  CHECK(Str(begins[0], "id").rfind("0x", 0) == 0);
  CHECK(Num(begins[0], "pid") == Num(ends[0], "pid"));
  CHECK(Num(ends[0], "ts") > Num(begins[0], "ts"));
  CHECK(begins[0]->fields().count("args") == 0);  // The id is the event's own.
  // No lane shows as an empty thread, no span as a slice.
  for (const Struct* x : Events(root, "X")) CHECK(Str(x, "name") != "request");

  const auto counters = Events(root, "C");
  REQUIRE(counters.size() == 2);
  CHECK(Str(counters[0], "name") == "queue_depth");
  CHECK(counters[0]->fields().at("args").struct_value().fields().at("value").number_value() == 2);
  CHECK(counters[1]->fields().at("args").struct_value().fields().at("value").number_value() == 0.5);
  for (const Struct* x : Events(root, "X")) CHECK(Str(x, "name") != "queue_depth");

  const auto instants = Events(root, "i");
  REQUIRE(instants.size() == 1);
  CHECK(Str(instants[0], "name") == "cache_miss");
  CHECK(Str(instants[0], "s") == "t");
  const auto& args = instants[0]->fields().at("args").struct_value().fields();
  CHECK(args.at("key").string_value() == "k7");
  CHECK(args.count("instant") == 0);
  CHECK(SliceAt(root, Num(instants[0], "tid"), Num(instants[0], "ts")) != "cache_miss");
}

TEST_CASE("Kineto trace: flows, async lanes as annotation threads, counters and instants") {
  const Struct root = testing::ParseStrictJson(testing::KinetoTraceText(ServingSpace()));
  // Flows bind to the producer's and consumer's slices.
  std::multimap<std::string, std::string> pairs = FlowPairs(root, "flow");
  CHECK(pairs.size() == 4);
  CHECK(pairs.count("accept") == 2);
  CHECK(pairs.count("add_to_batch") == 2);
  std::map<double, std::string> thread_names;
  for (const Struct* m : Events(root, "M")) {
    if (Str(m, "name") == "thread_name" && m->fields().at("tid").has_number_value()) {
      thread_names[Num(m, "tid")] =
          m->fields().at("args").struct_value().fields().at("name").string_value();
    }
  }
  int spans = 0;
  for (const Struct* x : Events(root, "X")) {
    if (Str(x, "name") != "request") continue;
    ++spans;
    CHECK(Str(x, "cat") == "user_annotation");
    CHECK(thread_names[Num(x, "tid")] == "requests");
    CHECK(Num(x, "tid") < 4294967296.0);  // A 32-bit thread id, as Kineto's.
  }
  CHECK(spans == 1);
  const auto counters = Events(root, "C");
  REQUIRE(counters.size() == 2);
  CHECK(Str(counters[0], "name") == "queue_depth");
  const auto instants = Events(root, "i");
  int misses = 0;
  for (const Struct* i : instants) misses += Str(i, "name") == "cache_miss" ? 1 : 0;
  CHECK(misses == 1);
}

}  // namespace
}  // namespace neuronprof
