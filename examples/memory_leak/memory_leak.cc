// A deliberate leak, to see it in `neuronprof summary`: an inference loop
// that keeps every step's activations in a "debug cache" it never clears.
// The memory table shows the allocating operator holding the bytes, and the
// per-step table shows the allocator growing by the same amount each step.
//
//   memory_leak [--logdir DIR] [--steps N]
//   neuronprof summary DIR
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"

int main(int argc, char** argv) {
  std::string logdir = "logs";
  int steps = 8;
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
  if (steps <= 0 || argc % 2 == 0) {
    std::fprintf(stderr, "usage: %s [--logdir DIR] [--steps N]  (N > 0)\n", argv[0]);
    return 2;
  }
  torch::manual_seed(0);
  torch::set_num_threads(1);
  if (absl::Status s = neuronprof::EnableTorchOperators(); !s.ok()) {
    std::fprintf(stderr, "memory_leak: %s\n", s.ToString().c_str());
    return 1;
  }
  neuronprof::ProfilerOptions options;
  options.logdir = logdir;
  options.profile_type = neuronprof::ProfileType::kOperator;  // Memory is on by default.
  options.port = 0;
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "memory_leak: %s\n", profiler.status().ToString().c_str());
    return 1;
  }
  torch::nn::Linear layer(256, 256);
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> debug_cache;  // The leak: never cleared.
  for (int step = 0; step < steps; ++step) {
    neuronprof::StepTrace trace("infer", step);
    const auto input = torch::randn({64, 256});
    const auto hidden = torch::relu(layer->forward(input));
    debug_cache.push_back(hidden);  // 64 x 256 floats = 64 KiB per step.
    const auto output = hidden.sum();
  }
  auto result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "memory_leak: %s\n", result.status().ToString().c_str());
    return 1;
  }
  for (const std::string& file : result->files) std::printf("wrote %s\n", file.c_str());
  return 0;
}
