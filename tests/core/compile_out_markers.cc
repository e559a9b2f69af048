// Every marker form of <neuronprof/trace.h>, in one program built twice:
// with NEURONPROF_DISABLE (tests/core/compile_out_test.sh: compiled and
// linked without libneuronprof, then checked with nm) and normally (the
// compile_out_markers_enabled target). Exits non-zero when an argument was
// evaluated that the mode promises not to evaluate.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "neuronprof/trace.h"

namespace {

int evaluations = 0;

int Counted(int value) {
  ++evaluations;
  return value;
}

constexpr neuronprof::StaticName kStatic("static_name");

void EveryMarker(int step) {
  std::string runtime_name = "layer_" + std::to_string(step);
  char buffer[8] = {'n', 'o', '_', 'n', 'u', 'l', '!', '!'};  // No NUL.
  neuronprof::SetCurrentThreadName("compile_out");
  neuronprof::StepTrace step_trace("train", step, {{"batch", 32}});
  neuronprof::ScopedTrace by_copy(runtime_name);
  neuronprof::ScopedTrace with_args(runtime_name, {{"k", 1}, {"s", "v"}}, neuronprof::kTraceInfo);
  neuronprof::ScopedTrace literal("literal");
  neuronprof::ScopedTrace literal_args("literal", {{"d", 0.5}, {"b", true}});
  neuronprof::ScopedTrace from_buffer(buffer);
  neuronprof::ScopedTrace static_name(kStatic, neuronprof::kTraceVerbose);
  neuronprof::ScopedTrace static_args(kStatic, {{"u", 7u}});
  auto [first, second] = std::pair<int, int>(step, step + 1);
  NEURONPROF_SCOPE("scope");
  NEURONPROF_SCOPE("scope_level", neuronprof::kTraceVerbose);
  NEURONPROF_SCOPE("scope_args", {{"first", first}, {"second", second}});
  NEURONPROF_SCOPE("scope_counted", {{"n", Counted(step)}});
  // Typed arguments (neuronprof::Arg).
  neuronprof::StepTrace typed_step("train", step, neuronprof::Arg("batch", 32));
  neuronprof::ScopedTrace typed_args(runtime_name, neuronprof::Arg("k", 1),
                                     neuronprof::Arg("s", "v"));
  neuronprof::ScopedTrace typed_literal("literal", neuronprof::Arg("d", 0.5));
  neuronprof::ScopedTrace typed_static(kStatic, neuronprof::Arg("b", true));
  NEURONPROF_SCOPE("scope_typed", neuronprof::Arg("n", Counted(step)));
  NEURONPROF_IF_TRACING(static_cast<uint32_t>(Counted(neuronprof::kTraceInfo))) { Counted(step); }
  if (neuronprof::TracingEnabled()) Counted(step);
  // Flows, async spans, counters and instants (trace_events.h).
  neuronprof::TraceProducer producer("enqueue");
  neuronprof::TraceProducer typed("enqueue", neuronprof::ContextType::kBatcher,
                                  neuronprof::NewContextId(), {{"size", 4}});
  neuronprof::TraceConsumer consumer("dequeue", neuronprof::ContextType::kBatcher,
                                     typed.context_id());
  neuronprof::TraceConsumer generic("dequeue", producer.context_id());
  neuronprof::TraceConsumer consumer_args("dequeue", neuronprof::ContextType::kGeneric, 7,
                                          {{"k", 1}}, neuronprof::kTraceInfo);
  const uint64_t batch_ids[] = {producer.context_id(), typed.context_id()};
  neuronprof::TraceBatchConsumer batch("assemble", neuronprof::ContextType::kGeneric, batch_ids, 2);
  const std::vector<uint64_t> id_vector(batch_ids, batch_ids + 2);
  neuronprof::TraceBatchConsumer batch_vector("assemble", neuronprof::ContextType::kBatcher,
                                              id_vector, neuronprof::kTraceInfo);
  neuronprof::AsyncTrace request("requests", "request");
  neuronprof::AsyncTrace moved = std::move(request);
  neuronprof::AsyncTrace with_id(kStatic, kStatic, 42);
  if (with_id.id() != 42 || moved.recording()) Counted(step);
  moved.End();
  neuronprof::TraceCounter("queue_depth", step);
  neuronprof::TraceCounter("queue_depth", uint64_t{3});
  neuronprof::TraceCounter("load", 0.5);
  neuronprof::TraceInstant("cache_miss");
  neuronprof::TraceInstant("cache_miss", {{"key", "k"}}, neuronprof::kTraceInfo);
  // Their typed arguments (neuronprof::Arg).
  neuronprof::TraceProducer typed_producer("enqueue", neuronprof::ContextType::kGeneric, 0,
                                           neuronprof::Arg("size", 4), neuronprof::Arg("s", "v"));
  neuronprof::TraceConsumer typed_consumer("dequeue", neuronprof::ContextType::kGeneric,
                                           typed_producer.context_id(), neuronprof::Arg("k", 1));
  neuronprof::TraceBatchConsumer typed_batch("assemble", neuronprof::ContextType::kGeneric,
                                             batch_ids, 2, neuronprof::Arg("n", 2));
  neuronprof::TraceBatchConsumer typed_batch_vector("assemble", neuronprof::ContextType::kGeneric,
                                                    id_vector, neuronprof::Arg("n", 2));
  neuronprof::AsyncTrace typed_span("requests", "request");
  typed_span.End(neuronprof::Arg("status", 200), neuronprof::Arg("route", "/v1"));
  neuronprof::TraceInstant("cache_miss", neuronprof::Arg("key", "k"), neuronprof::Arg("d", 0.5));
}

}  // namespace

int main() {
#ifdef NEURONPROF_DISABLE
  static_assert(!neuronprof::TracingEnabled(neuronprof::kTraceCritical),
                "disabled TracingEnabled is a constant false");
  const int expected = 0;  // Nothing of the macros' arguments runs.
#else
  const int expected = 3;  // No capture: the SCOPE arguments and the level.
#endif
  EveryMarker(3);
  if (evaluations != expected) {
    std::fprintf(stderr, "evaluated %d counted arguments, expected %d\n", evaluations, expected);
    return 1;
  }
  std::puts("ok");
  return 0;
}
