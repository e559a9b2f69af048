// A dynamic batching queue: workers take up to max_batch requests at once,
// waiting at most `timeout` after the oldest queued request arrived for
// the batch to fill (TF Serving's and Triton's rule).
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_BATCHING_QUEUE_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_BATCHING_QUEUE_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "instrumentation.h"

namespace inference_server {

using Clock = std::chrono::steady_clock;

struct Request {
  int64_t id = 0;
  std::vector<float> input;
  Clock::time_point enqueued;
  RequestTrace trace;
};

class BatchingQueue {
 public:
  BatchingQueue(size_t max_batch, std::chrono::microseconds timeout)
      : max_batch_(max_batch), timeout_(timeout) {}

  void Push(Request request) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      request.enqueued = Clock::now();
      queue_.push_back(std::move(request));
      QueueDepth(static_cast<int64_t>(queue_.size()));
    }
    changed_.notify_one();
  }

  // No more requests: workers drain the queue, then PopBatch returns empty.
  void Close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      closed_ = true;
    }
    changed_.notify_all();
  }

  // The next batch: full, or whatever is queued once the oldest request
  // has waited `timeout`, or the rest after Close(). Empty: closed and
  // drained.
  std::vector<Request> PopBatch() {
    NEURONPROF_SCOPE("wait_for_batch");
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return closed_ || !queue_.empty(); });
      if (queue_.empty()) return {};  // Closed and drained.
      bool timed_out = false;
      while (!closed_ && !queue_.empty() && queue_.size() < max_batch_) {
        const Clock::time_point deadline = queue_.front().enqueued + timeout_;
        if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
          timed_out = true;
          break;
        }
      }
      if (queue_.empty()) continue;  // Another worker took them.
      std::vector<Request> batch;
      while (!queue_.empty() && batch.size() < max_batch_) {
        batch.push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
      QueueDepth(static_cast<int64_t>(queue_.size()));
      BatchFormed(static_cast<int64_t>(batch.size()), timed_out);
      if (!queue_.empty()) changed_.notify_one();  // Left for another worker.
      return batch;
    }
  }

 private:
  const size_t max_batch_;
  const std::chrono::microseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Request> queue_;
  bool closed_ = false;
};

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_BATCHING_QUEUE_H_
