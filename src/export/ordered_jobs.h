// Text formatted in jobs on worker threads and handed on in order: how the
// trace writers spread a large trace's formatting over the cores while the
// file is written as one stream. A few jobs are in flight at a time (memory
// stays bounded) and their buffers are reused from job to job (a large
// trace's pieces do not each fault in fresh pages). A job also prepares its
// text for the sink (ByteSink::Prepare: for a gzip file, compresses it), so
// that the caller's thread only writes.
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

#include "src/export/byte_sink.h"

namespace neuronprof {
namespace exporter {

// What a job formats into: its text and, once prepared, that text as the
// sink takes it.
struct JobBuffers {
  fmt::memory_buffer text;
  PreparedBytes prepared;
};

// Runs jobs 0 .. count-1: `run(i, buffers)` on a thread of its own returns a
// std::unique_ptr<Done> whose text starts in `buffers` (emptied buffers of
// an earlier job, or new ones); `take(i, done)` is then called on the
// caller's thread, in job order, and `done.TakeBuffers()` gives the buffers
// back for the next jobs. At most `in_flight` jobs run at a time.
template <typename Run, typename Take>
void RunJobsInOrder(size_t count, size_t in_flight, const Run& run, const Take& take) {
  using Done = typename std::invoke_result_t<const Run&, size_t, JobBuffers&&>::element_type;
  std::deque<std::future<std::unique_ptr<Done>>> running;
  std::vector<JobBuffers> spare;
  size_t next = 0;
  for (size_t i = 0; i < count; ++i) {
    while (next < count && running.size() < in_flight) {
      JobBuffers buffers;
      if (!spare.empty()) {
        buffers = std::move(spare.back());
        spare.pop_back();
      }
      running.push_back(std::async(std::launch::async,
                                   [&run, job = next, buffers = std::move(buffers)]() mutable {
                                     return run(job, std::move(buffers));
                                   }));
      ++next;
    }
    std::unique_ptr<Done> done = running.front().get();
    running.pop_front();
    take(i, *done);
    spare.push_back(done->TakeBuffers());
  }
}

}  // namespace exporter
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_EXPORT_ORDERED_JOBS_H_
