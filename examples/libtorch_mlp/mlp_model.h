// The seeds' MLP (torch-neuronx profiling guide), shared by the
// libtorch_mlp and libtorch_ddp examples.
#ifndef NEURONPROF_EXAMPLES_LIBTORCH_MLP_MLP_MODEL_H_
#define NEURONPROF_EXAMPLES_LIBTORCH_MLP_MLP_MODEL_H_

#include <torch/torch.h>

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"

namespace neuronprof_examples {

// MLP(input_size=10, output_size=2, layers=[hidden, hidden]) as in the
// guide. Each layer runs inside a neuronprof::ModuleScope, which names it
// by its registered name (a "layer:fc1" marker, PyProf's layer convention;
// main() calls NameModules once), so the operator table groups ops by layer.
struct MLPImpl : torch::nn::Module {
  MLPImpl(int input_size, int hidden, int output_size)
      : fc1(register_module("fc1", torch::nn::Linear(input_size, hidden))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, hidden))),
        fc3(register_module("fc3", torch::nn::Linear(hidden, output_size))) {}

  torch::Tensor forward(torch::Tensor x) {
    NEURONPROF_SCOPE("MLP");  // Zero-copy, with its file and line.
    {
      neuronprof::ModuleScope layer(*fc1);
      x = torch::relu(fc1->forward(x));
    }
    {
      neuronprof::ModuleScope layer(*fc2);
      x = torch::relu(fc2->forward(x));
    }
    {
      neuronprof::ModuleScope layer(*fc3);
      x = fc3->forward(x);
    }
    return torch::log_softmax(x, /*dim=*/1);
  }

  torch::nn::Linear fc1, fc2, fc3;
};
TORCH_MODULE(MLP);

}  // namespace neuronprof_examples

#endif  // NEURONPROF_EXAMPLES_LIBTORCH_MLP_MLP_MODEL_H_
