// A training loop profiled by steps, as with torch.profiler's schedule:
// schedule(wait=1, warmup=1, active=3, repeat=2) over 12 steps writes two
// runs of three steps each (steps 2-4 and 7-9); each run's files are written
// on the Profiler's own thread, and on_trace_ready reports them.
//
//   training_schedule [--logdir DIR] [--steps N]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "neuronprof/neuronprof.h"

namespace {

// y = w x + b fitted by SGD to y = 3x + 1 with noise.
struct Model {
  float w = 0.0f, b = 0.0f, dw = 0.0f, db = 0.0f;
};

std::vector<float> MakeBatch(std::mt19937& rng, int n) {
  std::uniform_real_distribution<float> x(-1.0f, 1.0f);
  std::vector<float> batch(n);
  for (float& v : batch) v = x(rng);
  return batch;
}

float TrainStep(Model& model, const std::vector<float>& x) {
  std::vector<float> y(x.size());
  {
    NEURONPROF_SCOPE("forward");
    for (size_t i = 0; i < x.size(); ++i) y[i] = model.w * x[i] + model.b;
  }
  float loss = 0.0f;
  {
    NEURONPROF_SCOPE("loss_backward");
    model.dw = model.db = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
      const float error = y[i] - (3.0f * x[i] + 1.0f);
      loss += error * error / x.size();
      model.dw += 2.0f * error * x[i] / x.size();
      model.db += 2.0f * error / x.size();
    }
  }
  {
    NEURONPROF_SCOPE("optimizer_step");
    model.w -= 0.1f * model.dw;
    model.b -= 0.1f * model.db;
  }
  return loss;
}

}  // namespace

int main(int argc, char** argv) {
  std::string logdir = "logs";
  int steps = 12;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--logdir") == 0) {
      logdir = argv[i + 1];
    } else if (std::strcmp(argv[i], "--steps") == 0) {
      steps = std::atoi(argv[i + 1]);
    } else {
      std::fprintf(stderr, "usage: %s [--logdir DIR] [--steps N]\n", argv[0]);
      return 2;
    }
  }

  neuronprof::ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;  // No remote captures in this example.
  options.schedule = neuronprof::ProfilerSchedule{/*wait=*/1, /*warmup=*/1,
                                                  /*active=*/3, /*repeat=*/2};
  // Runs on the Profiler's writer thread once a cycle's files are written.
  options.on_trace_ready = [](const neuronprof::ProfileResult& result) {
    std::printf("cycle %lld: %lld steps, %lld events -> %s\n", static_cast<long long>(result.cycle),
                static_cast<long long>(result.steps), static_cast<long long>(result.events),
                result.run_dir.c_str());
  };
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "profiler: %s\n", profiler.status().ToString().c_str());
    return 1;
  }

  std::mt19937 rng(42);
  Model model;
  for (int step = 0; step < steps; ++step) {
    {
      neuronprof::StepTrace trace("train", step);
      const float loss = TrainStep(model, MakeBatch(rng, 4096));
      if (step % 4 == 0) std::printf("step %d loss %.4f\n", step, loss);
    }
    // The end of the step, as torch's prof.step(): the schedule moves on.
    if (absl::Status stepped = profiler.Step(); !stepped.ok()) {
      std::fprintf(stderr, "profiler: %s\n", stepped.ToString().c_str());
    }
  }

  // Waits for the writer; a cycle still recording would be written here.
  auto last = profiler.Stop();
  if (!last.ok()) {
    std::fprintf(stderr, "profiler: %s\n", last.status().ToString().c_str());
    return 1;
  }
  std::printf(
      "%zu runs under %s/plugins/profile; open them with\n"
      "  tensorboard --logdir %s   (then the PROFILE tab)\n",
      profiler.cycle_results().size(), logdir.c_str(), logdir.c_str());
  return 0;
}
