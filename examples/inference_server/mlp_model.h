// The served model: a three-layer MLP (matmul + bias + ReLU) in plain C++,
// run on the host or, when given one, on the fake accelerator. Each layer
// is a marker, so its time (and its device time and FLOPs) shows per
// layer in `neuronprof summary`.
#ifndef NEURONPROF_EXAMPLES_INFERENCE_SERVER_MLP_MODEL_H_
#define NEURONPROF_EXAMPLES_INFERENCE_SERVER_MLP_MODEL_H_

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "fake_accelerator.h"
#include "neuronprof/neuronprof.h"

namespace inference_server {

class MlpModel {
 public:
  static constexpr int kInputs = 256, kHidden = 512, kOutputs = 16;

  explicit MlpModel(uint32_t seed) {
    std::mt19937 random(seed);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    for (Layer& layer : layers_) {
      layer.weights.resize(static_cast<size_t>(layer.in) * layer.out);
      for (float& w : layer.weights) w = normal(random);
      layer.bias.assign(layer.out, 0.01f);
    }
  }

  // FLOPs of one forward pass over `batch` rows (2 per multiply-add).
  static int64_t Flops(int64_t batch) {
    return 2 * batch *
           (int64_t{kInputs} * kHidden + int64_t{kHidden} * kHidden + int64_t{kHidden} * kOutputs);
  }

  // `input`: batch x kInputs, row-major; returns batch x kOutputs.
  std::vector<float> Forward(std::vector<float> input, int batch,
                             FakeAccelerator* accelerator) const {
    NEURONPROF_SCOPE("forward");
    if (accelerator != nullptr) accelerator->CopyIn(static_cast<int64_t>(input.size() * 4));
    for (const Layer& layer : layers_) {
      neuronprof::ScopedTrace marker(layer.marker);
      std::vector<float> output;
      auto kernel = [&] { output = Apply(layer, input, batch); };
      if (accelerator != nullptr) {
        accelerator->Run(layer.kernel, 2 * int64_t{batch} * layer.in * layer.out, kernel);
      } else {
        kernel();
      }
      input = std::move(output);
    }
    return input;
  }

 private:
  struct Layer {
    int in, out;
    bool relu;
    neuronprof::StaticName marker;
    const char* kernel;
    std::vector<float> weights, bias;
  };

  // out = relu?(in x W + b), loops ordered for contiguous access.
  static std::vector<float> Apply(const Layer& layer, const std::vector<float>& in, int batch) {
    std::vector<float> out(static_cast<size_t>(batch) * layer.out);
    for (int r = 0; r < batch; ++r) {
      float* row = &out[static_cast<size_t>(r) * layer.out];
      std::copy(layer.bias.begin(), layer.bias.end(), row);
      for (int k = 0; k < layer.in; ++k) {
        const float x = in[static_cast<size_t>(r) * layer.in + k];
        const float* w = &layer.weights[static_cast<size_t>(k) * layer.out];
        for (int c = 0; c < layer.out; ++c) row[c] += x * w[c];
      }
      if (layer.relu) {
        for (int c = 0; c < layer.out; ++c) row[c] = std::max(row[c], 0.0f);
      }
    }
    return out;
  }

  Layer layers_[3] = {
      {kInputs, kHidden, true, neuronprof::StaticName("fc1"), "gemm_relu_fc1", {}, {}},
      {kHidden, kHidden, true, neuronprof::StaticName("fc2"), "gemm_relu_fc2", {}, {}},
      {kHidden, kOutputs, false, neuronprof::StaticName("fc3"), "gemm_fc3", {}, {}}};
};

}  // namespace inference_server

#endif  // NEURONPROF_EXAMPLES_INFERENCE_SERVER_MLP_MODEL_H_
