// The loops of bench/serving_bench.cc, one per marker form; included by an
// enabled and a NEURONPROF_DISABLE translation unit. Each returns thread
// CPU ns per iteration (on a shared 2-core VM a wall clock also counts the
// time the thread waits for a core).
#ifndef NEURONPROF_BENCH_SERVING_BENCH_LOOPS_H_
#define NEURONPROF_BENCH_SERVING_BENCH_LOOPS_H_

#include <time.h>

#include <cstdint>

#include "neuronprof/trace.h"

namespace serving_bench {
// Internal linkage: the enabled and the compiled-out translation units each
// get their own loops (one inline definition for both would break the ODR
// and let the linker keep either).
namespace {

inline double ThreadCpuNs() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) * 1e9 + static_cast<double>(now.tv_nsec);
}

// Keeps the compiler from merging or dropping iterations.
inline void Barrier() { asm volatile("" ::: "memory"); }

template <typename F>
double PerIteration(int n, F&& body) {
  const double start = ThreadCpuNs();
  for (int i = 0; i < n; ++i) {
    body(i);
    Barrier();
  }
  return (ThreadCpuNs() - start) / n;
}

inline double ScopeLoop(int n) {
  return PerIteration(n, [](int) { NEURONPROF_SCOPE("literal_marker"); });
}
// The plain marker with a copied name: what the flow markers build on.
inline double CopiedScopeLoop(int n) {
  return PerIteration(n, [](int) { neuronprof::ScopedTrace trace("copied_marker"); });
}
// With the caller's frames (Tracy's ZoneScopedS): the unwind is the cost,
// about proportional to the stack's depth (main + 6 frames here).
inline double StackScopeLoop(int n) {
  return PerIteration(n, [](int) { NEURONPROF_SCOPE_STACK("stack_marker"); });
}
// Arguments (issue 24): typed (neuronprof::Arg) and the initializer list.
inline double ArgIntLoop(int n) {
  return PerIteration(
      n, [](int i) { neuronprof::ScopedTrace t("zone", neuronprof::Arg("batch", i)); });
}
inline double ArgIntTextLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::ScopedTrace t("zone", neuronprof::Arg("batch", i), neuronprof::Arg("tag", "x"));
  });
}
inline double InitListIntTextLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::ScopedTrace t("zone", {{"batch", i}, {"tag", "x"}});
  });
}
inline double StepLoop(int n) {
  return PerIteration(n, [](int i) { neuronprof::StepTrace step("train", i); });
}
// A producer with a generated id, as a request's enqueue.
inline double ProducerLoop(int n) {
  return PerIteration(n, [](int) { neuronprof::TraceProducer producer("enqueue"); });
}
inline double ConsumerLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::TraceConsumer consumer("dequeue", neuronprof::ContextType::kGeneric,
                                       static_cast<uint64_t>(i) + 1);
  });
}
// One batch of 8 requests' ids consumed by one marker (a link per id).
inline double BatchConsumerLoop(int n) {
  return PerIteration(n, [](int i) {
    const uint64_t base = static_cast<uint64_t>(i) * 8 + 1;
    const uint64_t ids[8] = {base,     base + 1, base + 2, base + 3,
                             base + 4, base + 5, base + 6, base + 7};
    neuronprof::TraceBatchConsumer consumer("assemble", neuronprof::ContextType::kGeneric, ids, 8);
  });
}
inline double CounterLoop(int n) {
  return PerIteration(n, [](int i) { neuronprof::TraceCounter("queue_depth", i); });
}
inline double CounterDoubleLoop(int n) {
  return PerIteration(n, [](int i) { neuronprof::TraceCounter("load", i * 0.5); });
}
// Begin and End of one span (on one thread: the cost, not the hand-over).
inline double AsyncLoop(int n) {
  return PerIteration(n, [](int) {
    neuronprof::AsyncTrace span("requests", "request");
    span.End();
  });
}
inline double InstantLoop(int n) {
  return PerIteration(n, [](int) { neuronprof::TraceInstant("cache_miss"); });
}
// Serving markers with one argument, typed (neuronprof::Arg) and as a list.
inline double ProducerArgLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::TraceProducer producer("enqueue", neuronprof::ContextType::kGeneric, 0,
                                       neuronprof::Arg("batch", i));
  });
}
inline double ConsumerArgLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::TraceConsumer consumer("dequeue", neuronprof::ContextType::kGeneric,
                                       static_cast<uint64_t>(i) + 1, neuronprof::Arg("batch", i));
  });
}
inline double InstantArgLoop(int n) {
  return PerIteration(
      n, [](int i) { neuronprof::TraceInstant("cache_miss", neuronprof::Arg("batch", i)); });
}
inline double AsyncArgLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::AsyncTrace span("requests", "request");
    span.End(neuronprof::Arg("status", i));
  });
}

inline double ProducerListLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::TraceProducer producer("enqueue", neuronprof::ContextType::kGeneric, 0,
                                       {{"batch", i}});
  });
}
inline double ConsumerListLoop(int n) {
  return PerIteration(n, [](int i) {
    neuronprof::TraceConsumer consumer("dequeue", neuronprof::ContextType::kGeneric,
                                       static_cast<uint64_t>(i) + 1, {{"batch", i}});
  });
}
inline double InstantListLoop(int n) {
  return PerIteration(n, [](int i) { neuronprof::TraceInstant("cache_miss", {{"batch", i}}); });
}

}  // namespace

namespace compiled_out {  // bench/serving_bench_disabled.cc
double Scope(int n);
double CopiedScope(int n);
double Producer(int n);
double Consumer(int n);
double BatchConsumer(int n);
double Counter(int n);
double Async(int n);
double Instant(int n);
double ArgIntText(int n);
}  // namespace compiled_out

}  // namespace serving_bench

#endif  // NEURONPROF_BENCH_SERVING_BENCH_LOOPS_H_
