// Runs a TorchScript file under a kOperator capture: the neuronprof side of
// tests/interop/test_torch_profiler_agreement.py, whose reference side
// (torch_reference.py) runs the same file under torch.profiler with the
// same warm-up and iterations.
//
//   torchscript_runner MODEL.pt ITERATIONS LOGDIR [train]
//
// forward() takes no arguments (the inputs are the module's attributes).
// Inference runs under a NoGradGuard; `train` runs forward() as a loss,
// backward, and an SGD update of every parameter written out as the Python
// side writes it. Prints the .xplane.pb path.
#include <ATen/Parallel.h>
#include <torch/script.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"

namespace {

constexpr int kWarmup = 3;  // As torch_reference.py: the executor specializes first.
constexpr double kLearningRate = 0.1;

void Run(torch::jit::Module& module, bool train) {
  if (!train) {
    torch::NoGradGuard no_grad;
    module.forward({});
    return;
  }
  // Python's Tensor.backward() seeds the gradient with
  // ones_like(preserve_format); libtorch's C++ one with a contiguous
  // ones_like (docs/OPERATORS.md): seeded here as Python does.
  torch::Tensor loss = module.forward({}).toTensor();
  loss.backward(torch::ones_like(loss, torch::MemoryFormat::Preserve));
  torch::NoGradGuard no_grad;
  for (torch::Tensor p : module.parameters()) {
    p.add_(p.grad(), -kLearningRate);
    p.mutable_grad().zero_();
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s MODEL.pt ITERATIONS LOGDIR [train] [stacks]\n", argv[0]);
    return 2;
  }
  bool train = false;
  neuronprof::TorchOperatorOptions torch_options;
  for (int i = 4; i < argc; ++i) {
    train = train || std::string(argv[i]) == "train";
    torch_options.record_stacks = torch_options.record_stacks || std::string(argv[i]) == "stacks";
  }
  const int iterations = std::atoi(argv[2]);
  at::set_num_threads(1);  // As the reference: one intra-op thread.
  torch::jit::Module module = torch::jit::load(argv[1]);
  for (int i = 0; i < kWarmup; ++i) Run(module, train);

  if (absl::Status status = neuronprof::EnableTorchOperators(torch_options); !status.ok()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
    return 1;
  }
  neuronprof::ProfilerOptions options;
  options.logdir = argv[3];
  options.port = 0;
  options.profile_type = neuronprof::ProfileType::kOperator;
  options.write_chrome_trace = false;
  neuronprof::Profiler profiler(options);
  for (int i = 0; i < iterations; ++i) Run(module, train);
  auto result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
    return 1;
  }
  for (const std::string& file : result->files) {
    if (file.size() > 10 && file.compare(file.size() - 10, 10, ".xplane.pb") == 0) {
      std::printf("%s\n", file.c_str());
    }
  }
  return 0;
}
