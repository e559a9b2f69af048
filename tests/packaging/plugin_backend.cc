// A backend that an inference server loads with dlopen: it links only
// neuronprof::markers and its own "Abseil" (own_abseil.h: another Abseil than
// the application's neuronprof uses), and instruments itself, while the
// application owns the capture. backend_run(n) records n "backend_op"
// markers on the calling thread and n on a thread of its own, each holding a
// "backend_step" marker with a copied name (a std::string that dies right
// after, made by its own absl::StrCat).
#include <neuronprof/trace.h>

#include <string>
#include <thread>

#include "own_abseil.h"

namespace {

void Work(int n) {
  for (int i = 0; i < n; ++i) {
    NEURONPROF_SCOPE("backend_op");
    std::string step = absl::StrCat("backend_", "step");
    neuronprof::ScopedTrace copied(step);
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) void backend_run(int n) {
  Work(n);
  std::thread worker([n] {
    neuronprof::SetCurrentThreadName("backend_worker");
    Work(n);
  });
  worker.join();
}
