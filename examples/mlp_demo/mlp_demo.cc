// The seeds' training loop in plain C++: a 3-layer MLP (10 -> H -> H -> 2)
// trained with SGD on NLL loss, with the torch-neuronx tutorial's markers
// (model_build, loss_backward, optimizer_step) inside one StepTrace per
// step, and a data-loader thread feeding batches. A Profiler captures it
// and writes a logdir for TensorBoard / xprof.
//
//   mlp_demo [--logdir DIR] [--steps N] [--hidden H] [--batch B]
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"

namespace {

struct Config {
  std::string logdir = "logs";
  int steps = 20;
  int hidden = 256;
  int batch = 64;
};

struct Batch {
  std::vector<float> x;    // batch x 10
  std::vector<int> label;  // batch
};

// A dense layer y = x W^T + b with its gradients.
struct Linear {
  int in, out;
  std::vector<float> w, b, dw, db, x;  // x: saved input for backward
  Linear(int in_features, int out_features, std::mt19937& rng)
      : in(in_features), out(out_features), w(in * out), b(out), dw(in * out), db(out) {
    std::uniform_real_distribution<float> init(-1.0f / std::sqrt(float(in)),
                                               1.0f / std::sqrt(float(in)));
    for (float& v : w) v = init(rng);
  }
  std::vector<float> Forward(const std::vector<float>& input, int n) {
    x = input;
    std::vector<float> y(n * out);
    for (int r = 0; r < n; ++r)
      for (int o = 0; o < out; ++o) {
        float acc = b[o];
        for (int i = 0; i < in; ++i) acc += input[r * in + i] * w[o * in + i];
        y[r * out + o] = acc;
      }
    return y;
  }
  std::vector<float> Backward(const std::vector<float>& dy, int n) {
    std::vector<float> dx(n * in, 0.0f);
    for (int r = 0; r < n; ++r)
      for (int o = 0; o < out; ++o) {
        const float g = dy[r * out + o];
        db[o] += g;
        for (int i = 0; i < in; ++i) {
          dw[o * in + i] += g * x[r * in + i];
          dx[r * in + i] += g * w[o * in + i];
        }
      }
    return dx;
  }
  void Step(float lr) {
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] -= lr * dw[i];
      dw[i] = 0;
    }
    for (size_t i = 0; i < b.size(); ++i) {
      b[i] -= lr * db[i];
      db[i] = 0;
    }
  }
};

struct Mlp {
  Linear fc1, fc2, fc3;
  std::vector<float> h1, h2;  // post-ReLU activations
  Mlp(int hidden, std::mt19937& rng)
      : fc1(10, hidden, rng), fc2(hidden, hidden, rng), fc3(hidden, 2, rng) {}

  static void Relu(std::vector<float>& v) {
    for (float& x : v) x = x > 0 ? x : 0;
  }
  static void ReluGrad(std::vector<float>& g, const std::vector<float>& act) {
    for (size_t i = 0; i < g.size(); ++i)
      if (act[i] <= 0) g[i] = 0;
  }

  // Returns log_softmax(fc3(relu(fc2(relu(fc1(x)))))).
  std::vector<float> Forward(const std::vector<float>& x, int n) {
    neuronprof::ScopedTrace t("forward");
    h1 = fc1.Forward(x, n);
    Relu(h1);
    h2 = fc2.Forward(h1, n);
    Relu(h2);
    std::vector<float> logits = fc3.Forward(h2, n);
    for (int r = 0; r < n; ++r) {
      float* row = &logits[r * 2];
      const float m = std::max(row[0], row[1]);
      const float lse = m + std::log(std::exp(row[0] - m) + std::exp(row[1] - m));
      row[0] -= lse;
      row[1] -= lse;
    }
    return logits;
  }

  void Backward(const std::vector<float>& log_probs, const std::vector<int>& label, int n) {
    // d(NLL(log_softmax))/dlogits = softmax - onehot, averaged over the batch.
    std::vector<float> g(n * 2);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < 2; ++c)
        g[r * 2 + c] = (std::exp(log_probs[r * 2 + c]) - (label[r] == c)) / n;
    std::vector<float> g2 = fc3.Backward(g, n);
    ReluGrad(g2, h2);
    std::vector<float> g1 = fc2.Backward(g2, n);
    ReluGrad(g1, h1);
    fc1.Backward(g1, n);
  }

  void Step(float lr) {
    fc1.Step(lr);
    fc2.Step(lr);
    fc3.Step(lr);
  }
};

// A loader thread that prepares batches ahead of the training loop.
class DataLoader {
 public:
  DataLoader(int batch, int count) : batch_(batch) {
    thread_ = std::thread([this, count] { Run(count); });
  }
  ~DataLoader() { thread_.join(); }

  Batch Next() {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [this] { return !queue_.empty(); });
    Batch b = std::move(queue_.front());
    queue_.pop_front();
    space_.notify_one();
    return b;
  }

 private:
  void Run(int count) {
    neuronprof::SetCurrentThreadName("data_loader");
    std::mt19937 rng(1);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    for (int i = 0; i < count; ++i) {
      Batch b;
      {
        neuronprof::ScopedTrace t("load_batch", neuronprof::Arg("batch_index", i),
                                  neuronprof::Arg("size", batch_));
        b.x.resize(batch_ * 10);
        b.label.resize(batch_);
        for (int r = 0; r < batch_; ++r) {
          float sum = 0;
          for (int c = 0; c < 10; ++c) sum += b.x[r * 10 + c] = noise(rng);
          b.label[r] = sum > 0 ? 1 : 0;  // A learnable rule.
        }
      }
      std::unique_lock<std::mutex> lock(mutex_);
      space_.wait(lock, [this] { return queue_.size() < 4; });
      queue_.push_back(std::move(b));
      ready_.notify_one();
    }
  }

  int batch_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;
  std::deque<Batch> queue_;
  std::thread thread_;
};

bool ParseArgs(int argc, char** argv, Config* config) {
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* flag) -> const char* {
      if (std::strcmp(argv[i], flag) != 0 || i + 1 >= argc) return nullptr;
      return argv[++i];
    };
    if (const char* v = value("--logdir"))
      config->logdir = v;
    else if (const char* v = value("--steps"))
      config->steps = std::atoi(v);
    else if (const char* v = value("--hidden"))
      config->hidden = std::atoi(v);
    else if (const char* v = value("--batch"))
      config->batch = std::atoi(v);
    else {
      std::fprintf(stderr, "usage: %s [--logdir DIR] [--steps N] [--hidden H] [--batch B]\n",
                   argv[0]);
      return false;
    }
  }
  if (config->steps < 1 || config->hidden < 1 || config->batch < 1) {
    std::fprintf(stderr, "steps, hidden and batch must be positive\n");
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, &config)) return 2;

  neuronprof::ProfilerOptions options;
  options.logdir = config.logdir;
  options.ms_duration = 60000;
  options.port = 0;  // This demo needs no remote capture server.
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "cannot start the profiler: %s\n", profiler.status().ToString().c_str());
    return 1;
  }

  std::printf("---------- Training ----------\n");
  std::mt19937 rng(0);
  DataLoader loader(config.batch, config.steps);
  Mlp model(config.hidden, rng);
  float loss = 0;
  for (int step = 0; step < config.steps; ++step) {
    neuronprof::StepTrace step_trace("train", step);
    Batch batch = loader.Next();
    std::vector<float> log_probs;
    {
      neuronprof::ScopedTrace t("model_build");
      log_probs = model.Forward(batch.x, config.batch);
      loss = 0;
      for (int r = 0; r < config.batch; ++r)
        loss -= log_probs[r * 2 + batch.label[r]] / config.batch;
    }
    {
      neuronprof::ScopedTrace t("loss_backward");
      model.Backward(log_probs, batch.label, config.batch);
    }
    {
      neuronprof::ScopedTrace t("optimizer_step");
      model.Step(0.05f);
    }
    if (step % 5 == 0 || step == config.steps - 1) {
      std::printf("step %3d  loss %.4f\n", step, loss);
    }
  }
  std::printf("---------- End Training ----------\n");

  absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "profile not written: %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("\nCaptured %lld events on %lld threads (%lld dropped) in %.1f ms.\n",
              static_cast<long long>(result->events), static_cast<long long>(result->threads),
              static_cast<long long>(result->dropped_events), result->duration_ns / 1e6);
  for (const std::string& file : result->files) std::printf("  wrote %s\n", file.c_str());
  for (const std::string& warning : result->warnings) {
    std::printf("  warning: %s\n", warning.c_str());
  }
  std::printf(
      "\nOpen it with:\n"
      "  tensorboard --logdir %s   (then the PROFILE tab)\n"
      "  xprof --logdir %s --port 8791\n"
      "or load the .trace.json.gz into https://ui.perfetto.dev\n",
      config.logdir.c_str(), config.logdir.c_str());
  return 0;
}
