// The recorder: what a capture keeps, what it leaves out, and how it counts
// what it could not keep.
#include "src/core/recorder.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/trace.h"
#include "proto/xplane.pb.h"
#include "src/collectors/host/host_collector.h"
#include "src/core/event_args.h"
#include "src/core/event_pool.h"
#include "src/xplane/sanitizers.h"
#include "tests/core/record_args.h"

#if NEURONPROF_ASAN
// A marker that kept a pointer into a returned stack frame must be an ASan
// error here (the runtimes leave this check off by default).
extern "C" const char* __asan_default_options() { return "detect_stack_use_after_return=1"; }
#endif

namespace neuronprof {
namespace {

using core::RecordedCapture;
using testing::ArgInt;
using testing::Events;
using testing::kBigBuffer;
using testing::Stop;

const core::ThreadEvents* FindThread(const RecordedCapture& capture, int64_t tid) {
  for (const auto& thread : capture.threads) {
    if (thread.thread_id == tid) return &thread;
  }
  return nullptr;
}

TEST_CASE("markers outside a capture are not recorded") {
  { ScopedTrace before("before"); }
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace inside("inside"); }
  RecordedCapture capture = Stop();
  { ScopedTrace after("after"); }
  REQUIRE(capture.threads.size() == 1);
  REQUIRE(capture.threads[0].events.size() == 1);
  CHECK(core::PlainName(capture.threads[0].events[0]) == "inside");
  CHECK(capture.dropped == 0);

  // The next capture does not see the marker placed in between.
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  RecordedCapture empty = Stop();
  CHECK(empty.threads.empty());
}

TEST_CASE("a second capture cannot start while one runs") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  core::Result<> second = core::StartRecording(2, kBigBuffer);
  CHECK(second.code() == core::ErrorCode::kFailedPrecondition);
  CHECK(second.message().find("already running") != std::string::npos);
  Stop();
  CHECK(core::StopRecording().status().code() == core::ErrorCode::kFailedPrecondition);
}

TEST_CASE("names, arguments and nesting are kept") {
  REQUIRE(core::StartRecording(3, kBigBuffer).ok());
  std::string dynamic = "layer_";
  dynamic += "7";
  {
    ScopedTrace outer("outer");
    ScopedTrace named(dynamic);
    ScopedTrace with_args("args", {{"int", -5},
                                   {"uint", uint64_t{18446744073709551615u}},
                                   {"double", 2.5},
                                   {"text", "a,b=c#d"},
                                   {"flag", true}});
  }
  RecordedCapture capture = Stop();
  const auto& events = Events(capture);
  REQUIRE(events.size() == 3);
  // Records are written as scopes end: innermost first.
  CHECK(core::PlainName(events[0]) == "args");
  CHECK(core::PlainName(events[1]) == "layer_7");
  CHECK(core::PlainName(events[2]) == "outer");
  CHECK(events[2].start_ticks <= events[1].start_ticks);
  CHECK(events[1].end_ticks <= events[2].end_ticks);

  std::vector<core::DecodedArg> args;
  core::DecodeArgs(events[0], &args);
  REQUIRE(args.size() == 5);
  CHECK(args[0].key == "int");
  CHECK(args[0].kind == 'i');
  CHECK(args[0].int_value == -5);
  CHECK(args[1].kind == 'u');
  CHECK(args[1].uint_value == 18446744073709551615u);
  CHECK(args[2].kind == 'd');
  CHECK(args[2].double_value == 2.5);
  CHECK(args[3].kind == 's');
  CHECK(args[3].string_value == "a,b=c#d");
  CHECK(args[4].int_value == 1);
}

TEST_CASE("StepTrace carries step_num and the root marker") {
  REQUIRE(core::StartRecording(1, kBigBuffer).ok());
  { StepTrace step("train", 42, {{"batch", 8}}); }
  RecordedCapture capture = Stop();
  const auto& record = Events(capture).at(0);
  CHECK(core::PlainName(record) == "train");
  CHECK(ArgInt(record, "step_num") == 42);
  CHECK(ArgInt(record, "_r") == 1);
  CHECK(ArgInt(record, "batch") == 8);
}

TEST_CASE("StepTrace keeps every extra argument") {
  REQUIRE(core::StartRecording(1, kBigBuffer).ok());
  {
    StepTrace step("train", 7, {{"a0", 0},   {"a1", 1},   {"a2", 2},   {"a3", 3},   {"a4", 4},
                                {"a5", 5},   {"a6", 6},   {"a7", 7},   {"a8", 8},   {"a9", 9},
                                {"a10", 10}, {"a11", 11}, {"a12", 12}, {"a13", 13}, {"a14", 14},
                                {"a15", 15}, {"a16", 16}, {"a17", 17}, {"a18", 18}, {"a19", 19}});
  }
  RecordedCapture capture = Stop();
  const auto& record = Events(capture).at(0);
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(record, &args);
  REQUIRE(args.size() == 22);
  CHECK(args[0].key == "step_num");
  CHECK(args[0].int_value == 7);
  CHECK(args[1].key == "_r");
  for (int i = 0; i < 20; ++i) {
    CHECK(std::string(args[2 + i].key) == "a" + std::to_string(i));
    CHECK(args[2 + i].int_value == i);
  }
}

// --- Names: what the caller's text held when the marker began. ---

const core::ThreadEvents& OnlyThread(const RecordedCapture& capture) {
  REQUIRE(capture.threads.size() == 1);
  return capture.threads[0];
}

std::vector<std::string> Names(const RecordedCapture& capture) {
  std::vector<std::string> names;
  for (const auto& record : OnlyThread(capture).events) {
    names.emplace_back(core::PlainName(record));
  }
  return names;
}

TEST_CASE("a char buffer rewritten inside the scope keeps the text at begin") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  char name[32];
  for (int layer = 0; layer < 3; ++layer) {
    std::snprintf(name, sizeof(name), "layer_%d", layer);
    ScopedTrace trace(name);
    std::snprintf(name, sizeof(name), "rewritten_%d", layer);
  }
  {
    // Not NUL-terminated: the array's end bounds the name.
    const char unterminated[4] = {'a', 'b', 'c', 'd'};
    ScopedTrace trace(unterminated);
  }
  RecordedCapture capture = Stop();
  CHECK(Names(capture) == std::vector<std::string>{"layer_0", "layer_1", "layer_2", "abcd"});
}

// The marker's name lives in this frame, which is gone (and overwritten by
// ScribbleStack) long before the capture is read.
[[gnu::noinline]] void MarkerNamedFromStack(int i) {
  char name[48];
  std::snprintf(name, sizeof(name), "stack_frame_marker_%d", i);
  ScopedTrace trace(name);
}

[[gnu::noinline]] void ScribbleStack() {
  volatile char junk[512];
  for (size_t i = 0; i < sizeof(junk); ++i) junk[i] = static_cast<char>(i);
}

TEST_CASE("a name from a stack frame that has returned is kept") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  for (int i = 0; i < 3; ++i) {
    MarkerNamedFromStack(i);
    ScribbleStack();
  }
  RecordedCapture capture = Stop();
  CHECK(Names(capture) == std::vector<std::string>{"stack_frame_marker_0", "stack_frame_marker_1",
                                                   "stack_frame_marker_2"});
}

TEST_CASE("a std::string temporary's name is kept") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  for (int i = 0; i < 3; ++i) {
    // Longer than the small-string buffer: the text is on the heap and
    // freed at the end of the declaration.
    ScopedTrace trace(std::string("temporary_heap_allocated_name_") + std::to_string(i));
    std::string reuse(40, 'z');  // Likely reuses the freed allocation.
    (void)reuse;
  }
  RecordedCapture capture = Stop();
  CHECK(Names(capture) == std::vector<std::string>{"temporary_heap_allocated_name_0",
                                                   "temporary_heap_allocated_name_1",
                                                   "temporary_heap_allocated_name_2"});
}

constexpr char kGlobalName[] = "global_static_name";

TEST_CASE("StaticName and NEURONPROF_SCOPE store the name by pointer") {
  static constexpr StaticName kStatic(kGlobalName);
  static_assert(kStatic.size() == sizeof(kGlobalName) - 1, "length");
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  for (int i = 0; i < 2; ++i) {
    { ScopedTrace trace(kStatic); }
    { NEURONPROF_SCOPE("macro_literal"); }
    { NEURONPROF_SCOPE("macro_verbose", kTraceVerbose); }  // Above level 2.
  }
  RecordedCapture zero_copy = Stop();
  const auto& events = OnlyThread(zero_copy).events;
  REQUIRE(events.size() == 4);
  CHECK(events[0].name == kGlobalName);
  CHECK(events[2].name == kGlobalName);
  CHECK(core::PlainName(events[1]) == "macro_literal");
  // Both passes point at the same text: the macro's static, not a copy.
  CHECK(events[1].name == events[3].name);
  // Only the records' block was claimed: no arena for copies.
  CHECK(zero_copy.pool->used_bytes() == core::kBlockBytes);

  // The same literal through ScopedTrace is copied: one copy per marker.
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  for (int i = 0; i < 2; ++i) ScopedTrace trace("macro_literal");
  RecordedCapture copied = Stop();
  const auto& copies = OnlyThread(copied).events;
  REQUIRE(copies.size() == 2);
  CHECK(core::PlainName(copies[0]) == "macro_literal");
  CHECK(copies[0].name != copies[1].name);
  CHECK(copied.pool->used_bytes() == 2 * core::kBlockBytes);
}

TEST_CASE("records are read in place from the pool across blocks and in order") {
  // More records than one block holds, so the view spans block boundaries.
  const int64_t count = 3 * static_cast<int64_t>(internal::EventBlock::kRecords) + 7;
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  for (int64_t i = 0; i < count; ++i) NEURONPROF_SCOPE("numbered", {{"i", i}});
  RecordedCapture capture = Stop();
  REQUIRE(capture.pool != nullptr);
  const auto& events = OnlyThread(capture).events;
  REQUIRE(events.size() == static_cast<size_t>(count));
  int64_t expected = 0;
  int64_t outside_pool = 0;
  int64_t out_of_order = 0;
  for (const internal::EventRecord& record : events) {
    outside_pool += !capture.pool->Contains(&record);  // Not a copy.
    out_of_order += ArgInt(record, "i") != expected++;
  }
  CHECK(outside_pool == 0);
  CHECK(out_of_order == 0);
  CHECK(ArgInt(events[count - 1], "i") == count - 1);
  CHECK_THROWS_AS(events.at(count), std::out_of_range);
}

TEST_CASE("NEURONPROF_SCOPE forwards arguments and levels") {
  REQUIRE(core::StartRecording(3, kBigBuffer).ok());
  { NEURONPROF_SCOPE("with_args", {{"layer", 4}, {"dtype", "bf16"}}); }
  { NEURONPROF_SCOPE("with_args_and_level", {{"layer", 5}}, kTraceVerbose); }
  RecordedCapture capture = Stop();
  const auto& events = OnlyThread(capture).events;
  REQUIRE(events.size() == 2);
  CHECK(core::PlainName(events[0]) == "with_args");
  CHECK(ArgInt(events[0], "layer") == 4);
  CHECK(core::PlainName(events[1]) == "with_args_and_level");
  CHECK(ArgInt(events[1], "layer") == 5);
}

// --- Markers too large for a block. ---

std::string AfterName(int i) {
  // ~100 bytes each: the 1,000 of them need two more arena blocks.
  return "after_the_big_marker_" + std::to_string(i) + "_" + std::string(80, 'p');
}

TEST_CASE("a marker too large for a block is counted on its own; nothing else is lost") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  // The first copy claims the arena's block before the records claim
  // theirs, so an arena that ran past its block would overwrite records.
  for (int i = 0; i < 10; ++i) ScopedTrace trace("dynamic_before_" + std::to_string(i));
  for (int i = 0; i < 100; ++i) NEURONPROF_SCOPE("literal_before");
  const std::string blob(70 * 1000, 'x');
  { ScopedTrace big("big", {{"blob", blob}}); }
  for (int i = 0; i < 1000; ++i) ScopedTrace trace(AfterName(i));
  RecordedCapture capture = Stop();

  const std::vector<std::string> names = Names(capture);
  REQUIRE(names.size() == 1110);
  int wrong_before = 0;
  for (int i = 0; i < 10; ++i) wrong_before += names[i] != "dynamic_before_" + std::to_string(i);
  for (int i = 10; i < 110; ++i) wrong_before += names[i] != "literal_before";
  CHECK(wrong_before == 0);
  int wrong_after = 0;
  for (int i = 0; i < 1000; ++i) wrong_after += names[110 + i] != AfterName(i);
  CHECK(wrong_after == 0);
  CHECK(capture.dropped == 0);
  CHECK(capture.too_large == 1);
  // "big", then kind 's', the key's length and bytes, the value's length
  // and bytes (src/core/event_args.h).
  const uint64_t big_bytes = 3 + 1 + 4 + 4 + 4 + blob.size();
  CHECK(capture.largest_too_large == big_bytes);

  tensorflow::profiler::XSpace space;
  collectors::CollectStats stats;
  collectors::AddHostPlane(capture, &space, &stats);
  CHECK(stats.dropped == 0);
  REQUIRE(space.warnings_size() == 1);
  const std::string& warning = space.warnings(0);
  INFO(warning);
  CHECK(warning.find("1 host markers were too large") != std::string::npos);
  CHECK(warning.find(std::to_string(big_bytes) + " bytes") != std::string::npos);
  CHECK(warning.find("limit of 65536 bytes") != std::string::npos);
  CHECK(warning.find("max_buffer_bytes") == std::string::npos);
}

TEST_CASE("markers too large for a block take no buffer space") {
  // Three blocks: one for records, one for copied names, one spare. Each
  // oversized marker used to claim a block of its own.
  REQUIRE(core::StartRecording(2, 3 * core::kBlockBytes).ok());
  const std::string huge_name(70 * 1000, 'n');
  for (int i = 0; i < 10; ++i) {
    ScopedTrace big_name(huge_name);
    ScopedTrace big_arg("big", {{"blob", huge_name}});
    ScopedTrace kept("kept_" + std::to_string(i));
  }
  RecordedCapture capture = Stop();
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i) expected.push_back("kept_" + std::to_string(i));
  CHECK(Names(capture) == expected);
  CHECK(capture.too_large == 20);
  CHECK(capture.largest_too_large == 3 + 1 + 4 + 4 + 4 + huge_name.size());
  CHECK(capture.dropped == 0);
  CHECK(capture.pool->used_bytes() == 2 * core::kBlockBytes);
}

TEST_CASE("a marker that fills a whole block is still recorded") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace small("small"); }
  // Exactly one block: it cannot share the first block, so it takes its own.
  const std::string block_name(core::kBlockBytes, 'b');
  { ScopedTrace full(block_name); }
  { ScopedTrace next("next"); }
  RecordedCapture capture = Stop();
  const std::vector<std::string> names = Names(capture);
  REQUIRE(names.size() == 3);
  CHECK(names[0] == "small");
  CHECK(names[1] == block_name);
  CHECK(names[2] == "next");
  CHECK(capture.too_large == 0);
}

TEST_CASE("a string_view name keeps its NUL bytes with or without arguments") {
  // issue 27: a plain marker was cut at the NUL, one with arguments kept it.
  const std::string name("a\0b", 3);
  const char buffer[8] = "c\0d";  // A char array is a C string: "c".
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace plain(name); }
  { ScopedTrace with_args(name, {{"k", 1}}); }
  { ScopedTrace array(buffer); }
  { ScopedTrace array_with_args(buffer, {{"k", 1}}); }
  RecordedCapture capture = Stop();
  CHECK(Names(capture) == std::vector<std::string>{name, name, "c", "c"});
}

TEST_CASE("an empty name (a null string_view) is recorded, never copied from null") {
  // issue 27: memcpy(nullptr, 0) on the plain path is UB (UBSan reports it).
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace warm_up("first"); }  // The thread's arena exists: the inline path.
  { ScopedTrace empty{std::string_view()}; }
  { ScopedTrace empty_with_args(std::string_view(), {{"k", 1}}); }
  RecordedCapture capture = Stop();
  CHECK(Names(capture) == std::vector<std::string>{"first", "", ""});
}

TEST_CASE("arguments keep every byte of their keys and values, and exact numbers") {
  // Separator-like and control bytes, NUL included: nothing is replaced.
  const std::string key("k\x1e\x1f\0y", 5);
  const std::string text("v\x1f\x1e\0\xff", 5);
  const uint64_t big = 18446744073709551615u;
  const double tiny = 4.9406564584124654e-324;  // Loses digits if printed short.
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  {
    ScopedTrace trace(
        "args", {{key, text}, {"i", int64_t{-9223372036854775807 - 1}}, {"u", big}, {"d", tiny}});
  }
  RecordedCapture capture = Stop();
  REQUIRE(capture.threads.size() == 1);
  REQUIRE(capture.threads[0].events.size() == 1);
  const internal::EventRecord& record = capture.threads[0].events[0];
  CHECK(core::PlainName(record) == "args");
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(record, &args);
  REQUIRE(args.size() == 4);
  CHECK(args[0].key == key);
  CHECK(args[0].kind == 's');
  CHECK(args[0].string_value == text);
  CHECK(args[1].int_value == std::numeric_limits<int64_t>::min());
  CHECK(args[2].uint_value == big);
  CHECK(args[3].double_value == tiny);
}

TEST_CASE("DecodeArgs stops at an argument cut short and keeps the ones before") {
  const std::string key_length("\x02\0\0\0", 4);
  const int64_t seven = 7;
  std::string encoded = "n";
  encoded += 'i';
  encoded += key_length + "k1";
  encoded.append(reinterpret_cast<const char*>(&seven), sizeof(seven));
  encoded += 's';
  encoded += key_length + "k2" + std::string("\x09\0\0\0", 4) + "short";  // 9 > 5
  internal::EventRecord record{};
  record.name = encoded.data();
  record.name_length = static_cast<uint32_t>(encoded.size());
  record.args_offset = 2;
  CHECK(core::PlainName(record) == "n");
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(record, &args);
  REQUIRE(args.size() == 1);
  CHECK(args[0].key == "k1");
  CHECK(args[0].int_value == 7);
}

TEST_CASE("host_tracer_level filters markers by level") {
  REQUIRE(core::StartRecording(1, kBigBuffer).ok());
  {
    ScopedTrace critical("critical", kTraceCritical);
    ScopedTrace info("info", kTraceInfo);
    ScopedTrace verbose(std::string_view("verbose"), kTraceVerbose);
  }
  RecordedCapture level1 = Stop();
  REQUIRE(level1.threads.size() == 1);
  REQUIRE(level1.threads[0].events.size() == 1);
  CHECK(core::PlainName(level1.threads[0].events[0]) == "critical");

  REQUIRE(core::StartRecording(0, kBigBuffer).ok());
  CHECK_FALSE(TracingEnabled(kTraceCritical));
  { ScopedTrace critical("critical"); }
  CHECK(Stop().threads.empty());
}

// Each worker numbers its events; the main thread opens and closes several
// captures while they run. Every capture must hold, per thread, a gap-free
// run of numbers that lies within the window, with no number twice.
TEST_CASE("concurrent start/stop keeps contiguous per-thread sequences") {
  constexpr int kThreads = 4;
  constexpr int kCaptures = 6;
  // Workers never run more than kBudgetPerCapture events ahead of the main
  // thread, so a starved main thread (a loaded CI machine) cannot fill the
  // buffer: drops would be correct but are not what this test is about.
  constexpr int64_t kBudgetPerCapture = 10000;
  std::atomic<bool> quit{false};
  std::atomic<int64_t> budget{0};
  std::vector<std::atomic<int64_t>> done(kThreads);
  std::vector<std::atomic<int64_t>> tids(kThreads);
  for (auto& d : done) d.store(0);
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&, t] {
      tids[t].store(static_cast<int64_t>(gettid()));
      for (int64_t seq = 0; !quit.load(std::memory_order_relaxed); ++seq) {
        while (seq >= budget.load(std::memory_order_acquire) &&
               !quit.load(std::memory_order_relaxed)) {
          std::this_thread::yield();
        }
        if (seq % 2 == 0) {
          ScopedTrace trace("seq", {{"seq", seq}});
        } else {
          ScopedTrace trace(std::string_view("seq"), {{"seq", seq}});
        }
        done[t].store(seq + 1, std::memory_order_release);
      }
    });
  }
  std::vector<int64_t> last_seen(kThreads, -1);
  for (int c = 0; c < kCaptures; ++c) {
    std::vector<int64_t> before(kThreads), after(kThreads);
    // Raised before the window opens, so workers write while it opens.
    budget.fetch_add(kBudgetPerCapture, std::memory_order_release);
    for (int t = 0; t < kThreads; ++t) before[t] = done[t].load(std::memory_order_acquire);
    REQUIRE(core::StartRecording(2, kBigBuffer).ok());
    // Let every worker record a few hundred events inside the window. The
    // event in flight when `done` is read may have begun before the window
    // opened (and so not be recorded): 301 more finished events hold at
    // least 300 that began inside it.
    for (int t = 0; t < kThreads; ++t) {
      const int64_t target = done[t].load() + 301;
      // A worker that used its budget before the window opened gets 301 more.
      if (budget.load() < target) budget.store(target, std::memory_order_release);
      while (done[t].load(std::memory_order_acquire) < target) std::this_thread::yield();
    }
    RecordedCapture capture = Stop();
    for (int t = 0; t < kThreads; ++t) after[t] = done[t].load(std::memory_order_acquire);

    CHECK(capture.dropped == 0);
    for (int t = 0; t < kThreads; ++t) {
      const core::ThreadEvents* thread = FindThread(capture, tids[t].load());
      REQUIRE(thread != nullptr);
      REQUIRE(thread->events.size() >= 300);
      int64_t expected = ArgInt(thread->events.front(), "seq");
      // Completed before the window opened / started after it closed.
      CHECK(expected >= before[t]);
      CHECK(expected > last_seen[t]);
      int64_t out_of_sequence = 0;
      for (const auto& record : thread->events) {
        out_of_sequence += ArgInt(record, "seq") != expected;
        ++expected;
      }
      CHECK(out_of_sequence == 0);
      CHECK(expected - 1 <= after[t]);
      last_seen[t] = expected - 1;
    }
  }
  quit.store(true);
  for (auto& worker : workers) worker.join();
}

TEST_CASE("threads that exit during a capture keep their events, once") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  std::vector<int64_t> tids(3);
  for (int round = 0; round < 3; ++round) {
    std::thread worker([&, round] {
      tids[round] = static_cast<int64_t>(gettid());
      SetCurrentThreadName("short_lived_" + std::to_string(round));
      for (int i = 0; i < 1000; ++i) ScopedTrace trace("work", {{"i", i}});
    });
    worker.join();
  }
  RecordedCapture capture = Stop();
  int found = 0;
  for (const auto& thread : capture.threads) {
    if (thread.thread_name.rfind("short_lived_", 0) != 0) continue;
    ++found;
    CHECK(thread.exited);
    REQUIRE(thread.events.size() == 1000);
    for (int i = 0; i < 1000; ++i) CHECK(ArgInt(thread.events[i], "i") == i);
  }
  CHECK(found == 3);

  // The ended threads do not reappear in the next capture.
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  { ScopedTrace main_only("main_only"); }
  RecordedCapture next = Stop();
  REQUIRE(next.threads.size() == 1);
  CHECK(next.threads[0].events.size() == 1);
}

TEST_CASE("a full buffer drops and counts exactly, without blocking") {
  // Two blocks: one thread holds at most 2 * kRecords zero-copy events.
  const uint64_t records_per_block = (core::kBlockBytes / 32) - 1;
  REQUIRE(core::StartRecording(2, 2 * core::kBlockBytes).ok());
  constexpr int kEvents = 10000;
  for (int i = 0; i < kEvents; ++i) NEURONPROF_SCOPE("fill");
  RecordedCapture capture = Stop();
  REQUIRE(capture.threads.size() == 1);
  CHECK(capture.threads[0].events.size() == 2 * records_per_block);
  CHECK(capture.dropped == kEvents - 2 * records_per_block);
  CHECK(capture.threads[0].dropped == capture.dropped);
}

TEST_CASE("thread names come from the OS or SetCurrentThreadName") {
  REQUIRE(core::StartRecording(2, kBigBuffer).ok());
  std::thread os_named([] {
    pthread_setname_np(pthread_self(), "os_named");
    ScopedTrace trace("x");
  });
  os_named.join();
  std::thread api_named([] {
    SetCurrentThreadName("api named thread");
    ScopedTrace trace("x");
  });
  api_named.join();
  RecordedCapture capture = Stop();
  std::vector<std::string> names;
  for (const auto& thread : capture.threads) names.push_back(thread.thread_name);
  CHECK(std::count(names.begin(), names.end(), "os_named") == 1);
  CHECK(std::count(names.begin(), names.end(), "api named thread") == 1);
}

}  // namespace
}  // namespace neuronprof
