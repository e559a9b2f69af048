// RunJobsInOrder on a JobPool: the order and bound the trace writers rely
// on, and the threads and buffers kept from job to job and call to call.
#include "src/export/ordered_jobs.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace neuronprof {
namespace exporter {
namespace {

// A job's result: the index it formatted, in its buffers.
struct Done {
  JobBuffers buffers;
  size_t capacity_given = 0;  // Of the text buffer the job was handed.
  JobBuffers TakeBuffers() { return std::move(buffers); }
};

// How many jobs ran on this thread before (0: the thread's first job).
thread_local int jobs_on_this_thread = 0;

TEST_CASE("ordered jobs: taken in job order, at most in_flight out, though later ones end first") {
  constexpr size_t kJobs = 30;
  constexpr size_t kInFlight = 3;
  JobPool pool(kInFlight);
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<bool> ended(kJobs, false);
  std::atomic<int> out{0};  // Handed out and not taken yet.
  int most_out = 0;
  std::vector<size_t> taken;
  const auto run = [&](size_t job, JobBuffers&& buffers) {
    std::unique_lock<std::mutex> lock(mutex);
    most_out = std::max(most_out, ++out);
    // The first of each group of three waits for the last: it ends after it.
    if (job % kInFlight == 0 && job + kInFlight - 1 < kJobs) {
      changed.wait(lock, [&] { return ended[job + kInFlight - 1]; });
    }
    ended[job] = true;
    changed.notify_all();
    auto done = std::make_unique<Done>();
    done->buffers = std::move(buffers);
    fmt::format_to(std::back_inserter(done->buffers.text), "{}", job);
    return done;
  };
  const auto take = [&](size_t job, Done& done) {
    CHECK(std::string(done.buffers.text.data(), done.buffers.text.size()) == std::to_string(job));
    taken.push_back(job);
    --out;
  };
  RunJobsInOrder(pool, kJobs, kInFlight, run, take);
  std::vector<size_t> expected(kJobs);
  for (size_t i = 0; i < kJobs; ++i) expected[i] = i;
  CHECK(taken == expected);
  CHECK(most_out <= static_cast<int>(kInFlight));
}

TEST_CASE("ordered jobs: a pool's threads serve job after job, call after call") {
  constexpr size_t kJobs = 12;
  constexpr size_t kInFlight = 2;
  constexpr size_t kText = 64 * 1024;  // Past fmt's inline buffer.
  JobPool pool(kInFlight);
  std::mutex mutex;
  int threads_used = 0;  // Jobs that were the first on their thread.
  const auto run = [&](size_t, JobBuffers&& buffers) {
    if (jobs_on_this_thread++ == 0) {
      std::lock_guard<std::mutex> lock(mutex);
      ++threads_used;
    }
    auto done = std::make_unique<Done>();
    done->capacity_given = buffers.text.capacity();
    done->buffers = std::move(buffers);
    done->buffers.text.resize(kText);
    return done;
  };
  std::vector<size_t> capacities;
  const auto take = [&](size_t, Done& done) { capacities.push_back(done.capacity_given); };
  for (int call = 0; call < 2; ++call) {
    capacities.clear();
    RunJobsInOrder(pool, kJobs, kInFlight, run, take);
    // Past the first kInFlight jobs, each got an earlier job's buffers.
    REQUIRE(capacities.size() == kJobs);
    for (size_t job = kInFlight; job < kJobs; ++job) CHECK(capacities[job] >= kText);
  }
  // A thread per job would have started 2 * kJobs threads.
  CHECK(threads_used <= static_cast<int>(pool.threads()));
}

TEST_CASE("ordered jobs: a job's exception reaches the caller, and the pool goes on") {
  JobPool pool(2);
  std::atomic<int> ran{0};
  const auto run = [&](size_t job, JobBuffers&& buffers) {
    ++ran;
    if (job == 3) throw std::runtime_error("job 3 failed");
    auto done = std::make_unique<Done>();
    done->buffers = std::move(buffers);
    return done;
  };
  std::vector<size_t> taken;
  const auto take = [&](size_t job, Done&) { taken.push_back(job); };
  CHECK_THROWS_WITH(RunJobsInOrder(pool, 8, 2, run, take), "job 3 failed");
  CHECK(taken == std::vector<size_t>{0, 1, 2});
  taken.clear();
  RunJobsInOrder(pool, 2, 2, run, take);
  CHECK(taken == std::vector<size_t>{0, 1});
}

}  // namespace
}  // namespace exporter
}  // namespace neuronprof
