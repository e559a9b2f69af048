// Text formatted in jobs on worker threads and handed on in order: how the
// trace writers spread a large trace's formatting over the cores while the
// file is written as one stream. A few jobs are in flight at a time (memory
// stays bounded) and their buffers are reused from job to job (a large
// trace's pieces do not each fault in fresh pages). A job also prepares its
// text for the sink (ByteSink::Prepare: for a gzip file, compresses it), so
// that the caller's thread only writes.
//
// The jobs run on a JobPool's threads, started once and kept from call to
// call: a thread per job (std::async) cost a thread start, fresh stack
// pages and an munmap per 8K events. The buffers are kept for one call
// only: a writer's pool lives as long as the writer, and a dump streams a
// Chrome and a Kineto trace at once (flight_recorder_test bounds its peak).
#ifndef NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_
#define NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/export/byte_sink.h"

namespace neuronprof {
namespace exporter {

// What a job formats into: its text and, once prepared, that text as the
// sink takes it.
struct JobBuffers {
  fmt::memory_buffer text;
  PreparedBytes prepared;
};

// Worker threads for RunJobsInOrder, one caller at a time; they end with
// the pool.
class JobPool {
 public:
  explicit JobPool(size_t threads) {
    for (size_t i = 0; i < std::max<size_t>(threads, 1); ++i) {
      threads_.emplace_back([this] { Work(); });
    }
  }
  ~JobPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }
  JobPool(const JobPool&) = delete;
  JobPool& operator=(const JobPool&) = delete;

  size_t threads() const { return threads_.size(); }

  // Runs `task` on one of the threads.
  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void Work() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // Stopping, nothing left.
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Runs jobs 0 .. count-1 on `pool`'s threads: `run(i, buffers)` returns a
// std::unique_ptr<Done> whose text starts in `buffers` (emptied buffers of
// an earlier job of this call, or new ones); `take(i, done)` is then called
// on the caller's thread, in job order, and `done.TakeBuffers()` gives the
// buffers back for the next jobs. At most
// `in_flight` jobs are running or waiting for their take at a time. A job's
// exception is thrown here, once the jobs already handed out have ended.
template <typename Run, typename Take>
void RunJobsInOrder(JobPool& pool, size_t count, size_t in_flight, const Run& run,
                    const Take& take) {
  using Done = typename std::invoke_result_t<const Run&, size_t, JobBuffers&&>::element_type;
  using Result = std::promise<std::unique_ptr<Done>>;
  std::deque<std::future<std::unique_ptr<Done>>> running;
  // The jobs handed out use `run`: they end before this returns or throws.
  struct Drain {
    std::deque<std::future<std::unique_ptr<Done>>>& running;
    ~Drain() {
      for (auto& result : running) {
        if (result.valid()) result.wait();  // The one that threw is not.
      }
    }
  } drain{running};
  std::vector<JobBuffers> spare;
  size_t next = 0;
  for (size_t i = 0; i < count; ++i) {
    while (next < count && running.size() < std::max<size_t>(in_flight, 1)) {
      auto result = std::make_shared<Result>();
      auto buffers = std::make_shared<JobBuffers>();
      if (!spare.empty()) {
        *buffers = std::move(spare.back());
        spare.pop_back();
      }
      running.push_back(result->get_future());
      pool.Post([&run, job = next, result, buffers] {
        try {
          result->set_value(run(job, std::move(*buffers)));
        } catch (...) {
          result->set_exception(std::current_exception());
        }
      });
      ++next;
    }
    std::unique_ptr<Done> done = running.front().get();
    running.pop_front();
    take(i, *done);
    spare.push_back(done->TakeBuffers());
    spare.back().text.clear();  // Its capacity stays.
  }
}

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_
