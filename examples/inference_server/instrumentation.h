// Where the inference server tells neuronprof what happens to a request:
// every call site goes through these few functions, so richer events are
// added here, not across the server.
//
// Today: markers (ScopedTrace with the request or batch id as an argument)
// on each thread a request crosses, and a StepTrace per batch.
// Places for the serving events of <neuronprof/trace.h> (flows, async
// spans, counters, instants) are marked "serving events:".
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_INSTRUMENTATION_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_INSTRUMENTATION_H_

#include <cstdint>

#include "neuronprof/neuronprof.h"

namespace inference_server {

// What travels with a request from the acceptor to the worker that
// answers it.
struct RequestTrace {
  // serving events: the id of the TraceProducer in Accepted, consumed by
  // the TraceConsumer in Responded, so xprof draws the request's path.
  uint64_t context_id = 0;
  // serving events: the request's life on a track of its own, begun in
  // Accepted, moved along with the request, ended in Responded:
  //   neuronprof::AsyncTrace life;  // = AsyncTrace("requests", "request", id)
  // and its wait in the batching queue (begun in BatchingQueue::Push, ended
  // in PopBatch): neuronprof::AsyncTrace queue_wait;
};

// The acceptor thread took request `id` off the connection. Scoped: the
// marker covers parsing and enqueueing.
class Accepted {
 public:
  Accepted(int64_t id, RequestTrace& trace) : marker_("accept", {{"request", id}}) {
    // serving events: marker_ becomes a neuronprof::TraceProducer("accept",
    // ContextType::kGeneric, 0, {{"request", id}}), then
    // trace.context_id = marker_.context_id() and
    // trace.life = neuronprof::AsyncTrace("requests", "request", id).
    (void)trace;
  }

 private:
  neuronprof::ScopedTrace marker_;
};

// A worker answers request `id` of the batch it runs. Scoped.
class Responded {
 public:
  Responded(int64_t id, RequestTrace& trace) : marker_("respond", {{"request", id}}) {
    // serving events: marker_ becomes a neuronprof::TraceConsumer("respond",
    // ContextType::kGeneric, trace.context_id), then trace.life.End().
    (void)trace;
  }

 private:
  neuronprof::ScopedTrace marker_;
};

// The batching queue's depth after a change.
inline void QueueDepth(int64_t depth) {
  (void)depth;  // serving events: neuronprof::TraceCounter("queue_depth", depth);
}

// A worker took a batch of `size` requests; `timed_out`: the batch was
// closed by the timeout, not by reaching the maximum size.
inline void BatchFormed(int64_t size, bool timed_out) {
  // serving events: neuronprof::TraceCounter("batch_size", size); and
  // if (timed_out) neuronprof::TraceInstant("batch_timeout", {{"size", size}});
  (void)size;
  (void)timed_out;
}

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_INSTRUMENTATION_H_
