// Where the inference server tells neuronprof what happens to a request:
// every call site goes through these few functions, so richer events are
// added here, not across the server.
//
// A request: a producer marker on the acceptor, consumers on the worker
// (flows: the batch's one "assemble" consumes all its requests), an async span for its whole life,
// a StepTrace per batch, and counters for the queue depth and batch size.
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_INSTRUMENTATION_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_INSTRUMENTATION_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "neuronprof/neuronprof.h"

namespace inference_server {

// What travels with a request from the acceptor to the worker that
// answers it.
struct RequestTrace {
  // The context of the acceptor's TraceProducer, consumed on the worker
  // when its batch is assembled and when it is answered: xprof and
  // Perfetto draw the request's path across the threads, and the summary
  // measures its queue wait (accept -> assemble).
  uint64_t context_id = 0;
  // The request's life on the "requests" track, begun on the acceptor and
  // ended on the worker; its id is the context's, so the summary's tail of
  // requests/request counts the linked markers on every thread.
  neuronprof::AsyncTrace life;
};

// The acceptor thread took request `id` off the connection. Scoped: the
// marker covers parsing and enqueueing.
class Accepted {
 public:
  Accepted(int64_t id, RequestTrace& trace)
      : marker_("accept", neuronprof::ContextType::kGeneric, 0, {{"request", id}}) {
    trace.context_id = marker_.context_id();
    trace.life = neuronprof::AsyncTrace("requests", "request", trace.context_id);
  }

 private:
  neuronprof::TraceProducer marker_;
};

// A worker assembles a batch: one marker that consumes every request's
// context (many to one), so xprof and Perfetto draw an arrow from each
// request's accept into the batch. `ids`: the batch's context ids.
class Assembling {
 public:
  explicit Assembling(std::vector<uint64_t> ids)
      : ids_(std::move(ids)), marker_("assemble", neuronprof::ContextType::kGeneric, ids_) {}

 private:
  std::vector<uint64_t> ids_;
  neuronprof::TraceBatchConsumer marker_;
};

// A worker answers request `id` of the batch it runs. Scoped; the request's
// life ends with it.
class Responded {
 public:
  Responded(int64_t id, RequestTrace& trace)
      : trace_(trace),
        marker_("respond", neuronprof::ContextType::kGeneric, trace.context_id, {{"request", id}}) {
  }
  ~Responded() { trace_.life.End(); }

 private:
  RequestTrace& trace_;
  neuronprof::TraceConsumer marker_;
};

// The batching queue's depth after a change.
inline void QueueDepth(int64_t depth) { neuronprof::TraceCounter("queue_depth", depth); }

// A worker took a batch of `size` requests; `timed_out`: the batch was
// closed by the timeout, not by reaching the maximum size.
inline void BatchFormed(int64_t size, bool timed_out) {
  neuronprof::TraceCounter("batch_size", size);
  if (timed_out) neuronprof::TraceInstant("batch_timeout", {{"size", size}});
}

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_INSTRUMENTATION_H_
