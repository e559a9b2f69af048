// The seeds' 3-layer MLP training loop (torch-neuronx profiling guide),
// written with the libtorch C++ API and profiled with
// profile_type = kOperator: every aten operator of the forward pass, the
// autograd backward pass and the SGD step lands in the capture with its
// input shapes, FLOPs and bytes, nested under the tutorial's markers
// (model_build / loss_backward / optimizer_step) inside one step per epoch.
//
//   libtorch_mlp [--logdir DIR] [--epochs N] [--batch B] [--hidden H] [--stacks 1]
//
// --stacks 1 records each op's C++ call stack (TorchOperatorOptions::
// record_stacks): which line of this file launched it.
//
// Then: neuronprof summary DIR     (operator table in the terminal)
//       xprof --logdir DIR         (trace viewer, framework op stats)
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "mlp_model.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"

namespace {

using neuronprof_examples::MLP;

struct Config {
  std::string logdir = "logs";
  int epochs = 10;
  int batch = 64;
  int hidden = 256;
  int stacks = 0;
};

bool ParseInt(const char* text, int* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0 || value > 1000000) return false;
  *out = static_cast<int>(value);
  return true;
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--logdir DIR] [--epochs N] [--batch B] [--hidden H] [--stacks 0|1]\n",
               argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (i + 1 >= argc) return Usage(argv[0]);
    const char* value = argv[++i];
    bool ok = true;
    if (std::strcmp(flag, "--logdir") == 0) {
      config.logdir = value;
    } else if (std::strcmp(flag, "--epochs") == 0) {
      ok = ParseInt(value, &config.epochs);
    } else if (std::strcmp(flag, "--batch") == 0) {
      ok = ParseInt(value, &config.batch);
    } else if (std::strcmp(flag, "--hidden") == 0) {
      ok = ParseInt(value, &config.hidden);
    } else if (std::strcmp(flag, "--stacks") == 0) {
      ok = std::strcmp(value, "0") == 0 || std::strcmp(value, "1") == 0;
      config.stacks = ok && value[0] == '1';
    } else {
      ok = false;
    }
    if (!ok) return Usage(argv[0]);
  }

  torch::manual_seed(0);
  torch::set_num_threads(1);  // Stable timings on small machines.

  neuronprof::TorchOperatorOptions torch_options;
  torch_options.record_stacks = config.stacks != 0;
  if (absl::Status s = neuronprof::EnableTorchOperators(torch_options); !s.ok()) {
    std::fprintf(stderr, "libtorch_mlp: %s\n", s.ToString().c_str());
    return 1;
  }
  neuronprof::ProfilerOptions options;
  options.logdir = config.logdir;
  options.profile_type = neuronprof::ProfileType::kOperator;
  options.ms_duration = 15000;
  options.port = 0;  // No capture server needed for a local run.
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "libtorch_mlp: %s\n", profiler.status().ToString().c_str());
    return 1;
  }

  MLP model(10, config.hidden, 2);
  neuronprof::NameModules(*model);  // fc1, fc2, fc3: the ModuleScopes' names.
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.01));
  torch::nn::NLLLoss loss_fn;
  model->train();
  std::printf("----------Training ---------------\n");
  for (int epoch = 0; epoch < config.epochs; ++epoch) {
    neuronprof::StepTrace step("train_step", epoch);
    optimizer.zero_grad();
    torch::Tensor train_x = torch::randn({config.batch, 10});
    torch::Tensor train_label = torch::randint(0, 2, {config.batch}, torch::kLong);
    torch::Tensor loss;
    {
      NEURONPROF_SCOPE("model_build");
      loss = loss_fn(model->forward(train_x), train_label);
    }
    {
      NEURONPROF_SCOPE("loss_backward");
      loss.backward();
    }
    {
      NEURONPROF_SCOPE("optimizer_step");
      optimizer.step();
    }
    std::printf("epoch %d loss %.4f\n", epoch, loss.item<float>());
  }
  std::printf("----------End Training ---------------\n");

  absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "libtorch_mlp: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("captured %lld events (%lld dropped) in %s\n", static_cast<long long>(result->events),
              static_cast<long long>(result->dropped_events), result->run_dir.c_str());
  for (const std::string& file : result->files) std::printf("  %s\n", file.c_str());
  for (const std::string& warning : result->warnings) {
    std::printf("warning: %s\n", warning.c_str());
  }
  return 0;
}
