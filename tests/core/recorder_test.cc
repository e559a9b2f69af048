// The recorder: what a capture keeps, what it leaves out, and how it counts
// what it could not keep.
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "neuronprof/trace.h"
#include "src/core/event_args.h"
#include "src/core/recorder.h"

namespace neuronprof {
namespace {

using core::RecordedCapture;

constexpr uint64_t kBigBuffer = uint64_t{64} << 20;

RecordedCapture Stop() {
  auto capture = core::StopRecording();
  REQUIRE(capture.ok());
  return std::move(*capture);
}

int64_t ArgInt(const internal::EventRecord& record, const std::string& key) {
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(record, &args);
  for (const auto& arg : args) {
    if (std::string(arg.key) == key) return arg.int_value;
  }
  return -1;
}

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
  absl::Status second = core::StartRecording(2, kBigBuffer);
  CHECK(absl::IsFailedPrecondition(second));
  CHECK(std::string(second.message()).find("already running") != std::string::npos);
  Stop();
  CHECK(absl::IsFailedPrecondition(core::StopRecording().status()));
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
  REQUIRE(capture.threads.size() == 1);
  const auto& events = capture.threads[0].events;
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
  REQUIRE(capture.threads.size() == 1);
  const auto& record = capture.threads[0].events.at(0);
  CHECK(core::PlainName(record) == "train");
  CHECK(ArgInt(record, "step_num") == 42);
  CHECK(ArgInt(record, "_r") == 1);
  CHECK(ArgInt(record, "batch") == 8);
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
    // Let every worker record a few hundred events inside the window.
    for (int t = 0; t < kThreads; ++t) {
      const int64_t target = done[t].load() + 300;
      // A worker that used its budget before the window opened gets 300 more.
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
  // Two blocks: one thread holds at most 2 * kRecords literal-name events.
  const uint64_t records_per_block = (core::kBlockBytes / 32) - 1;
  REQUIRE(core::StartRecording(2, 2 * core::kBlockBytes).ok());
  constexpr int kEvents = 10000;
  for (int i = 0; i < kEvents; ++i) ScopedTrace trace("fill");
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
