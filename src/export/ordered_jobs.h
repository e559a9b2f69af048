// Text formatted in jobs on worker threads and handed on in order: how the
// trace writers spread a large trace's formatting over the cores while the
// file is written as one stream. A few jobs are in flight at a time (memory
// stays bounded) and their text buffers are reused from job to job (a large
// trace's pieces do not each fault in fresh pages).
#ifndef NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_
#define NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_

#include <fmt/format.h>

#include <cstddef>
#include <deque>
#include <future>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace neuronprof {
namespace exporter {

// Runs jobs 0 .. count-1: `run(i, buffer)` on a thread of its own returns a
// std::unique_ptr<Done> whose text starts in `buffer` (an emptied buffer of
// an earlier job, or a new one); `take(i, done)` is then called on the
// caller's thread, in job order, and `done.TakeBuffer()` gives the buffer
// back for the next jobs. At most `in_flight` jobs run at a time.
template <typename Run, typename Take>
void RunJobsInOrder(size_t count, size_t in_flight, const Run& run, const Take& take) {
  using Done = typename std::invoke_result_t<const Run&, size_t, fmt::memory_buffer&&>::element_type;
  std::deque<std::future<std::unique_ptr<Done>>> running;
  std::vector<fmt::memory_buffer> spare;
  size_t next = 0;
  for (size_t i = 0; i < count; ++i) {
    while (next < count && running.size() < in_flight) {
      fmt::memory_buffer buffer;
      if (!spare.empty()) {
        buffer = std::move(spare.back());
        spare.pop_back();
      }
      running.push_back(std::async(std::launch::async,
                                   [&run, job = next, buffer = std::move(buffer)]() mutable {
                                     return run(job, std::move(buffer));
                                   }));
      ++next;
    }
    std::unique_ptr<Done> done = running.front().get();
    running.pop_front();
    take(i, *done);
    spare.push_back(done->TakeBuffer());
  }
}

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_
