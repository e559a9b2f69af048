// Typed marker arguments (neuronprof::Arg, issue 24): written in place by
// the marker, they must be the very bytes the initializer-list form writes,
// so every reader (XSpace, Chrome and Kineto traces) shows the same stats.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "neuronprof/trace.h"
#include "src/core/event_args.h"
#include "src/core/event_pool.h"
#include "src/core/recorder.h"
#include "tests/core/record_args.h"

namespace neuronprof {
namespace {

using core::RecordedCapture;
using testing::ArgInt;
using testing::Events;
using testing::kBigBuffer;
using testing::Stop;

// What a record holds: its name with the encoded arguments, and where they begin.
std::string Encoded(const internal::EventRecord& record) {
  return std::string(record.name, record.name_length) + "@" + std::to_string(record.args_offset);
}

TEST_CASE("typed arguments write the bytes of the initializer-list form") {
  const std::string key("k\x1e\0y", 4);
  const std::string text("v\0\xff", 3);
  const std::string name("n\0m", 3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const int64_t min = std::numeric_limits<int64_t>::min();
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  const double tiny = 4.9406564584124654e-324;
  const char* null_text = nullptr;
  const char buffer[8] = "buf\0fer";
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace warm_up("first"); }  // The thread's arena exists: the inline path.
  // Pairs: typed, then the same arguments as a list.
  { ScopedTrace t("zone", Arg("batch", 7)); }
  { ScopedTrace t("zone", {{"batch", 7}}); }
  {
    ScopedTrace t(name, Arg(key, text), Arg("i", min), Arg("u", max), Arg("d", tiny),
                  Arg("nan", nan), Arg("flag", true), Arg("c", 'x'), Arg("f", 0.5f),
                  Arg("u32", uint32_t{4000000000u}), Arg("s16", int16_t{-3}));
  }
  {
    ScopedTrace t(name, {{key, text},
                         {"i", min},
                         {"u", max},
                         {"d", tiny},
                         {"nan", nan},
                         {"flag", true},
                         {"c", 'x'},
                         {"f", 0.5},
                         {"u32", uint32_t{4000000000u}},
                         {"s16", int16_t{-3}}});
  }
  { ScopedTrace t(std::string_view(), Arg("", ""), Arg("null", null_text)); }
  { ScopedTrace t(std::string_view(), {{"", ""}, {"null", ""}}); }
  { ScopedTrace t(buffer, Arg("k", std::string(300, 'z'))); }
  { ScopedTrace t(buffer, {{"k", std::string(300, 'z')}}); }
  { NEURONPROF_SCOPE("macro", Arg("layer", 3)); }
  { NEURONPROF_SCOPE("macro", {{"layer", 3}}); }
  { ScopedTrace t(StaticName("static"), Arg("x", -1)); }
  { ScopedTrace t(StaticName("static"), {{"x", -1}}); }
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 13);
  for (size_t i = 1; i < events.size(); i += 2) {
    INFO("pair " << i / 2);
    CHECK(Encoded(events[i]) == Encoded(events[i + 1]));
  }
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(events[3], &args);
  REQUIRE(args.size() == 10);
  CHECK(core::PlainName(events[3]) == name);
  CHECK(args[0].key == key);
  CHECK(args[0].string_value == text);
  CHECK(args[1].int_value == min);
  CHECK(args[2].uint_value == max);
  CHECK(std::isnan(args[4].double_value));
  CHECK(args[8].kind == 'u');
  CHECK(args[8].uint_value == 4000000000u);
  CHECK(args[9].int_value == -3);
  CHECK(core::PlainName(events[9]) == "macro");
  CHECK(capture.dropped == 0);
  CHECK(capture.too_large == 0);
}

TEST_CASE("typed arguments keep every marker across arena blocks") {
  // ~1 KiB per marker: 200 of them fill the arena's block three times, so
  // the out-of-line path claims new blocks in between.
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  const std::string text(1000, 't');
  for (int i = 0; i < 200; ++i) ScopedTrace t("m", Arg("i", i), Arg("text", text));
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 200);
  int wrong = 0;
  std::vector<core::DecodedArg> args;
  for (int i = 0; i < 200; ++i) {
    core::DecodeArgs(events[i], &args);
    wrong += args.size() != 2 || args[0].int_value != i || args[1].string_value != text;
  }
  CHECK(wrong == 0);
  CHECK(capture.pool->used_bytes() > 3 * core::kBlockBytes);
}

TEST_CASE("a typed marker too large for a block is counted; nothing else is lost") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  const std::string blob(70 * 1000, 'x');
  { ScopedTrace before("before", Arg("i", 1)); }
  { ScopedTrace big("big", Arg("blob", blob)); }
  { ScopedTrace after("after", Arg("i", 2)); }
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 2);
  CHECK(ArgInt(events[0], "i") == 1);
  CHECK(ArgInt(events[1], "i") == 2);
  CHECK(capture.too_large == 1);
  CHECK(capture.largest_too_large == 3 + 1 + 4 + 4 + 4 + blob.size());
}

TEST_CASE("StepTrace writes step_num and _r as the list form did") {
  REQUIRE(core::StartRecording(1, kBigBuffer).ok());
  { StepTrace step("train", 42); }
  { ScopedTrace t("train", {{"step_num", int64_t{42}}, {"_r", 1}}); }
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 2);
  CHECK(Encoded(events[0]) == Encoded(events[1]));
  CHECK(ArgInt(events[0], "step_num") == 42);
}

TEST_CASE("typed arguments on flows, batches and instants write the bytes of the list form") {
  const uint64_t ids[] = {5, 0};
  const std::string_view text("k\0y", 3);
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace warm_up("first"); }  // The thread's arena exists: the inline path.
  // Pairs: typed, then the same arguments as a list (given ids, so equal).
  { TraceProducer p("enqueue", ContextType::kBatcher, 77, Arg("batch", 7), Arg("tag", "x")); }
  { TraceProducer p("enqueue", ContextType::kBatcher, 77, {{"batch", 7}, {"tag", "x"}}); }
  { TraceConsumer c("dequeue", ContextType::kPjRt, 77, Arg("d", 0.5), Arg("u", 3u)); }
  { TraceConsumer c("dequeue", ContextType::kPjRt, 77, {{"d", 0.5}, {"u", 3u}}); }
  { TraceConsumer c("unlinked", ContextType::kGeneric, 0, Arg("flag", true)); }
  { TraceConsumer c("unlinked", ContextType::kGeneric, 0, {{"flag", true}}); }
  TraceInstant("miss", Arg("key", text), Arg("n", -3));
  TraceInstant("miss", {{"key", text}, {"n", -3}});
  // A batch's marker takes them as a consumer without a link does; its links
  // (recorded first) are those of the form without arguments.
  { TraceBatchConsumer b("assemble", ContextType::kGeneric, ids, 2, Arg("n", 2)); }
  { TraceBatchConsumer b("assemble", ContextType::kGeneric, ids, 2); }
  { TraceConsumer c("assemble", ContextType::kGeneric, 0, {{"n", 2}}); }
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 14);
  for (size_t i = 1; i < 9; i += 2) {
    INFO("pair " << i / 2);
    CHECK(Encoded(events[i]) == Encoded(events[i + 1]));
  }
  CHECK(Encoded(events[9]) == Encoded(events[11]));   // The links.
  CHECK(Encoded(events[10]) == Encoded(events[13]));  // The markers.
  CHECK(core::PlainName(events[12]) == "assemble");
  CHECK(ArgInt(events[10], "n") == 2);
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(events[1], &args);
  REQUIRE(args.size() == 4);
  CHECK(args[0].key == internal::kProducerTypeKey);
  CHECK(args[0].int_value == static_cast<int64_t>(ContextType::kBatcher));
  CHECK(args[1].uint_value == 77);
  CHECK(args[3].string_value == "x");
  core::DecodeArgs(events[7], &args);
  REQUIRE(args.size() == 3);
  CHECK(args[0].key == internal::kInstantKey);
  CHECK(args[1].string_value == text);
  CHECK(capture.dropped == 0);
}

TEST_CASE("an async span's End takes typed arguments after its track and id") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace warm_up("first"); }
  AsyncTrace plain("requests", "request", 9);
  AsyncTrace typed("requests", "request", 9);
  plain.End();
  typed.End(Arg("status", 200), Arg("route", "/v1"));
  typed.End(Arg("status", 500));  // Once only.
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 3);
  const std::string without = Encoded(events[1]);
  const std::string with = Encoded(events[2]);
  // The same name, track and id, then the arguments; the same args offset.
  CHECK(with.substr(0, events[1].name_length) == without.substr(0, events[1].name_length));
  CHECK(events[2].args_offset == events[1].args_offset);
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(events[2], &args);
  REQUIRE(args.size() == 4);
  CHECK(args[0].string_value == "requests");
  CHECK(args[1].uint_value == 9);
  CHECK(args[2].key == "status");
  CHECK(args[2].int_value == 200);
  CHECK(args[3].string_value == "/v1");
}

TEST_CASE("typed markers outside a capture or below its level record nothing") {
  { ScopedTrace before("before", Arg("i", 1)); }
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace inside("inside", Arg("i", 1)); }
  RecordedCapture capture = Stop();
  { ScopedTrace after("after", Arg("i", 1)); }
  const auto& events = Events(capture);
  REQUIRE(events.size() == 1);
  CHECK(core::PlainName(events[0]) == "inside");
}

}  // namespace
}  // namespace neuronprof
