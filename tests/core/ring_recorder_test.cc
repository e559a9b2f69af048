// The recorder's ring mode (the flight recorder's core): wrap-around keeps
// the newest events, snapshots taken while threads record hold only whole
// events, and memory stays within the ring.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/trace.h"
#include "src/core/event_args.h"
#include "src/core/recorder.h"
#include "tests/core/record_args.h"

namespace neuronprof {
namespace {

using core::RecordedCapture;

constexpr uint64_t kRingBytes = 8 * core::kBlockBytes;  // 512 KiB.

using testing::ArgInt;

RecordedCapture Snapshot(int64_t last_ms = 0) {
  auto snapshot = core::SnapshotRing(last_ms);
  REQUIRE(snapshot.ok());
  return std::move(*snapshot);
}

void StopRing() { REQUIRE(core::StopRecording().ok()); }

TEST_CASE("a ring keeps only the newest events, in order and whole") {
  REQUIRE(core::StartRingRecording(2, kRingBytes).ok());
  // ~50 bytes per event (record + name with one argument): many laps.
  constexpr int kEvents = 100000;
  char name[32];
  for (int i = 0; i < kEvents; ++i) {
    std::snprintf(name, sizeof(name), "event_%d", i);
    ScopedTrace trace(name, {{"i", i}});
  }
  RecordedCapture capture = Snapshot();
  REQUIRE(capture.threads.size() == 1);
  const auto& events = capture.threads[0].events;
  REQUIRE(events.size() > 1000);
  CHECK(events.size() * sizeof(internal::EventRecord) < kRingBytes);
  CHECK(capture.buffer_bytes == kRingBytes);
  int64_t expected = ArgInt(events.front(), "i");
  CHECK(expected > 0);  // The oldest events were overwritten.
  for (const auto& record : events) {
    REQUIRE(ArgInt(record, "i") == expected);
    REQUIRE(core::PlainName(record) == "event_" + std::to_string(expected));
    ++expected;
  }
  CHECK(expected == kEvents);  // The newest one is there.
  CHECK(capture.dropped == 0);

  // Recording goes on after a snapshot, and the next one sees it.
  { ScopedTrace after("after_snapshot"); }
  RecordedCapture next = Snapshot();
  REQUIRE(next.threads.size() == 1);
  CHECK(core::PlainName(next.threads[0].events[next.threads[0].events.size() - 1]) ==
        "after_snapshot");
  StopRing();
}

TEST_CASE("a snapshot's last_ms keeps only the recent events") {
  REQUIRE(core::StartRingRecording(2, kRingBytes).ok());
  { NEURONPROF_SCOPE("old"); }
  // Busy-wait on the clock (no sleep): the old event ends > 50 ms ago.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(80);
  while (std::chrono::steady_clock::now() < until) {
  }
  { NEURONPROF_SCOPE("new"); }
  RecordedCapture recent = Snapshot(50);
  REQUIRE(recent.threads.size() == 1);
  REQUIRE(recent.threads[0].events.size() == 1);
  CHECK(core::PlainName(recent.threads[0].events[0]) == "new");
  CHECK(Snapshot().threads[0].events.size() == 2);
  StopRing();
}

TEST_CASE("snapshots while 4 threads record at full speed hold only whole events") {
  REQUIRE(core::StartRingRecording(2, kRingBytes).ok());
  constexpr int kThreads = 4;
  std::atomic<int> ready{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      char name[48];
      ready.fetch_add(1);
      for (int64_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        // Names of varying length, so names and records cross blocks at
        // different points.
        std::snprintf(name, sizeof(name), "t%d_%lld_%.*s", t, static_cast<long long>(i),
                      static_cast<int>(i % 17), "xxxxxxxxxxxxxxxxx");
        ScopedTrace outer(name, {{"t", t}, {"i", i}});
        NEURONPROF_SCOPE("inner");
      }
    });
  }
  while (ready.load() < kThreads) std::this_thread::yield();
  uint64_t checked = 0;
  for (int round = 0; round < 20; ++round) {
    RecordedCapture capture = Snapshot();
    for (const auto& thread : capture.threads) {
      int64_t last_i = -1;
      for (const auto& record : thread.events) {
        const std::string plain(core::PlainName(record));
        if (plain == "inner") continue;
        const int64_t t = ArgInt(record, "t");
        const int64_t i = ArgInt(record, "i");
        REQUIRE(t >= 0);
        REQUIRE(t < kThreads);
        REQUIRE(i > last_i);  // In order, no duplicates.
        last_i = i;
        char expected[48];
        std::snprintf(expected, sizeof(expected), "t%d_%lld_%.*s", static_cast<int>(t),
                      static_cast<long long>(i), static_cast<int>(i % 17), "xxxxxxxxxxxxxxxxx");
        REQUIRE(plain == expected);
        REQUIRE(record.end_ticks >= record.start_ticks);
        ++checked;
      }
    }
  }
  stop.store(true);
  for (auto& thread : threads) thread.join();
  CHECK(checked > 0);
  StopRing();
}

TEST_CASE("an exited thread keeps its last events in the ring") {
  REQUIRE(core::StartRingRecording(2, kRingBytes).ok());
  std::thread([] {
    SetCurrentThreadName("short_lived");
    for (int i = 0; i < 10; ++i) ScopedTrace trace("worker_event", {{"i", i}});
  }).join();
  RecordedCapture capture = Snapshot();
  REQUIRE(capture.threads.size() == 1);
  CHECK(capture.threads[0].thread_name == "short_lived");
  CHECK(capture.threads[0].exited);
  CHECK(capture.threads[0].events.size() == 10);
  // Its blocks rejoin the ring: other threads overwrite them, and the
  // ring never needs more than its fixed pool.
  char name[32];
  for (int i = 0; i < 100000; ++i) {
    std::snprintf(name, sizeof(name), "later_%d", i);
    ScopedTrace trace(name);
  }
  RecordedCapture later = Snapshot();
  for (const auto& thread : later.threads) CHECK(thread.thread_name != "short_lived");
  CHECK(later.dropped == 0);
  StopRing();
}

TEST_CASE("exited threads leave nothing behind once the ring overwrote their events") {
  const size_t before = core::RegisteredThreadCount();
  REQUIRE(core::StartRingRecording(2, kRingBytes).ok());
  // Short-lived threads and no dump: a service that spawns a thread per
  // task must not grow while its flight recorder lives.
  constexpr int kThreads = 3000;
  for (int t = 0; t < kThreads; ++t) {
    std::thread([t] {
      SetCurrentThreadName("task_" + std::to_string(t));
      ScopedTrace trace("task", {{"t", t}});
    }).join();
  }
  // Kept: the slots whose events some block still holds (at most one per
  // block) and the exits since the last sweep (at most max(64, blocks)).
  constexpr size_t kBlocks = kRingBytes / core::kBlockBytes;
  const size_t kept = core::RegisteredThreadCount() - before;
  CHECK(kept <= kBlocks + 64);
  // The newest exited thread's events are still dumped, with its name.
  RecordedCapture capture = Snapshot();
  bool newest_found = false;
  for (const auto& thread : capture.threads) {
    if (thread.thread_name != "task_" + std::to_string(kThreads - 1)) continue;
    newest_found = true;
    CHECK(thread.exited);
    REQUIRE(thread.events.size() == 1);
    CHECK(ArgInt(thread.events[0], "t") == kThreads - 1);
  }
  CHECK(newest_found);
  // A snapshot sweeps too: only the threads the ring still holds stay.
  CHECK(core::RegisteredThreadCount() - before <= kBlocks);
  StopRing();
  CHECK(core::RegisteredThreadCount() <= before);
}

TEST_CASE("ring bad inputs give clear statuses") {
  using core::ErrorCode;
  core::Result<> small = core::StartRingRecording(2, core::kBlockBytes);
  CHECK(small.code() == ErrorCode::kInvalidArgument);
  CHECK(small.message().find("at least 4 blocks") != std::string::npos);

  auto none = core::SnapshotRing();
  CHECK(none.status().code() == ErrorCode::kFailedPrecondition);

  REQUIRE(core::StartRecording(2, kRingBytes).ok());  // A window, not a ring.
  CHECK(core::SnapshotRing().status().code() == ErrorCode::kFailedPrecondition);
  CHECK(core::StartRingRecording(2, kRingBytes).code() == ErrorCode::kFailedPrecondition);
  REQUIRE(core::StopRecording().ok());

  REQUIRE(core::StartRingRecording(2, kRingBytes).ok());
  CHECK(core::SnapshotRing(-1).status().code() == ErrorCode::kInvalidArgument);
  StopRing();
}

}  // namespace
}  // namespace neuronprof
