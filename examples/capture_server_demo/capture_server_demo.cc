// Capturing a running program from outside: a training loop that serves
// tensorflow.ProfilerService (neuronprof::ProfilerServer) and records
// nothing until a remote client asks for a window.
//
//   capture_server_demo [--port P] [--allowed_root DIR] [--seconds N]
//                       [--hidden H] [--batch B] [--step_ms MS] [--markers N]
//
//   --port          gRPC port on 127.0.0.1 (default 9012; 0 = any free port)
//   --allowed_root  profiles the server saves itself go only below this
//                   folder (default ./logs)
//   --seconds       stop after N seconds (default 0: run until SIGINT/SIGTERM)
//   --step_ms       shortest step; the loop sleeps out the rest (default 10)
//   --markers       extra empty "inner" markers per step (default 0): event
//                   volume for capture benchmarks (docs/PERFORMANCE.md)
//
// Once the server is up it prints one line, for people and scripts alike:
//
//   neuronprof server listening on 127.0.0.1:<port>
//
// Then capture a window from another shell with any ProfilerService client:
//
//   build/tools/neuronprof capture --service_addr localhost:9012 \
//       --logdir logs --duration_ms 2000
//   TensorBoard / xprof: PROFILE tab -> CAPTURE PROFILE -> localhost:9012
//     (the server saves the profile itself, so the TensorBoard logdir must
//      lie inside --allowed_root)
//
// Each step is one StepTrace ("train", step) holding the markers
// model_build > forward, loss_backward and optimizer_step, as in mlp_demo.
// SIGINT or SIGTERM ends the loop and shuts the server down cleanly (a
// capture in progress is ended first). Exit: 0 done, 1 the server could
// not start (e.g. the port is in use), 2 bad arguments.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "neuronprof/server.h"

namespace {

std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the signal handler needs a lock-free flag");

extern "C" void OnStopSignal(int /*signal*/) { g_stop.store(true); }

struct Config {
  int port = 9012;
  std::string allowed_root = "./logs";
  double seconds = 0;  // 0: until a signal.
  int hidden = 64;
  int batch = 32;
  int step_ms = 10;
  int markers = 0;
};

// A two-layer perceptron (10 -> H -> 1) with a logistic loss, trained by
// SGD on a synthetic rule. Small on purpose: the point is the markers.
class Mlp {
 public:
  Mlp(int hidden, std::mt19937& rng)
      : hidden_(hidden),
        w1_(10 * hidden),
        b1_(hidden),
        w2_(hidden),
        dw1_(w1_.size()),
        db1_(hidden),
        dw2_(hidden) {
    std::normal_distribution<float> init(0.0f, 0.3f);
    for (float& v : w1_) v = init(rng);
    for (float& v : w2_) v = init(rng);
  }

  // Returns the logits for n rows of x (n x 10); keeps activations.
  std::vector<float> Forward(const std::vector<float>& x, int n) {
    neuronprof::ScopedTrace t("forward");
    x_ = x;
    h_.assign(static_cast<size_t>(n) * hidden_, 0.0f);
    std::vector<float> logits(n, b2_);
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < hidden_; ++j) {
        float acc = b1_[j];
        for (int i = 0; i < 10; ++i) acc += x[r * 10 + i] * w1_[j * 10 + i];
        acc = acc > 0 ? acc : 0;  // ReLU
        h_[r * hidden_ + j] = acc;
        logits[r] += acc * w2_[j];
      }
    }
    return logits;
  }

  // Mean logistic loss; accumulates gradients.
  float Backward(const std::vector<float>& logits, const std::vector<float>& y, int n) {
    float loss = 0;
    for (int r = 0; r < n; ++r) {
      const float p = 1.0f / (1.0f + std::exp(-logits[r]));
      loss -= (y[r] * std::log(p + 1e-7f) + (1 - y[r]) * std::log(1 - p + 1e-7f)) / n;
      const float g = (p - y[r]) / n;
      db2_ += g;
      for (int j = 0; j < hidden_; ++j) {
        const float h = h_[r * hidden_ + j];
        dw2_[j] += g * h;
        if (h <= 0) continue;
        const float gh = g * w2_[j];
        db1_[j] += gh;
        for (int i = 0; i < 10; ++i) dw1_[j * 10 + i] += gh * x_[r * 10 + i];
      }
    }
    return loss;
  }

  void Step(float lr) {
    auto apply = [lr](std::vector<float>& w, std::vector<float>& dw) {
      for (size_t i = 0; i < w.size(); ++i) {
        w[i] -= lr * dw[i];
        dw[i] = 0;
      }
    };
    apply(w1_, dw1_);
    apply(b1_, db1_);
    apply(w2_, dw2_);
    b2_ -= lr * db2_;
    db2_ = 0;
  }

 private:
  int hidden_;
  std::vector<float> w1_, b1_, w2_, dw1_, db1_, dw2_;
  float b2_ = 0, db2_ = 0;
  std::vector<float> x_, h_;
};

void MakeBatch(int n, std::mt19937& rng, std::vector<float>* x, std::vector<float>* y) {
  std::normal_distribution<float> noise(0.0f, 1.0f);
  x->resize(static_cast<size_t>(n) * 10);
  y->resize(n);
  for (int r = 0; r < n; ++r) {
    float sum = 0;
    for (int c = 0; c < 10; ++c) sum += (*x)[r * 10 + c] = noise(rng);
    (*y)[r] = sum > 0 ? 1.0f : 0.0f;
  }
}

bool ParseInt(const char* text, int min, int max, int* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > max) return false;
  *out = static_cast<int>(v);
  return true;
}

bool ParseArgs(int argc, char** argv, Config* config) {
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (std::strcmp(flag, "--help") == 0 || std::strcmp(flag, "-h") == 0) return false;
    if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: missing value for %s\n", argv[0], flag);
      return false;
    }
    const char* value = argv[++i];
    bool ok = true;
    if (std::strcmp(flag, "--port") == 0) {
      ok = ParseInt(value, 0, 65535, &config->port);
    } else if (std::strcmp(flag, "--allowed_root") == 0) {
      config->allowed_root = value;
      ok = !config->allowed_root.empty();
    } else if (std::strcmp(flag, "--seconds") == 0) {
      char* end = nullptr;
      config->seconds = std::strtod(value, &end);
      ok = end != value && *end == '\0' && config->seconds >= 0;
    } else if (std::strcmp(flag, "--hidden") == 0) {
      ok = ParseInt(value, 1, 1 << 16, &config->hidden);
    } else if (std::strcmp(flag, "--batch") == 0) {
      ok = ParseInt(value, 1, 1 << 16, &config->batch);
    } else if (std::strcmp(flag, "--step_ms") == 0) {
      ok = ParseInt(value, 0, 60000, &config->step_ms);
    } else if (std::strcmp(flag, "--markers") == 0) {
      ok = ParseInt(value, 0, 1000000, &config->markers);
    } else {
      std::fprintf(stderr, "%s: unknown flag %s\n", argv[0], flag);
      return false;
    }
    if (!ok) {
      std::fprintf(stderr, "%s: bad value '%s' for %s\n", argv[0], value, flag);
      return false;
    }
  }
  return true;
}

void PrintUsage(const char* argv0) {
  std::fprintf(stderr,
               "usage: %s [--port P (default 9012, 0 = any free port)]\n"
               "          [--allowed_root DIR (default ./logs)] [--seconds N (0 = until "
               "SIGINT/SIGTERM)]\n"
               "          [--hidden H] [--batch B] [--step_ms MS] [--markers N]\n",
               argv0);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, &config)) {
    PrintUsage(argv[0]);
    return 2;
  }

  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  neuronprof::ProfilerServerOptions options;
  options.port = config.port;
  options.allowed_root = config.allowed_root;
  auto server = neuronprof::ProfilerServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "capture_server_demo: cannot start the profiler server: %s\n",
                 server.status().ToString().c_str());
    return 1;
  }
  // The one line scripts wait for; flushed, since stdout may be a pipe.
  std::printf("neuronprof server listening on 127.0.0.1:%d\n", (*server)->port());
  std::printf("profiles saved by the server go under %s\n", config.allowed_root.c_str());
  std::fflush(stdout);

  std::mt19937 rng(0);
  Mlp model(config.hidden, rng);
  std::vector<float> x, y;
  const auto start = std::chrono::steady_clock::now();
  const auto step_period = std::chrono::milliseconds(config.step_ms);
  int64_t step = 0;
  float loss = 0;
  while (!g_stop.load()) {
    const auto step_start = std::chrono::steady_clock::now();
    if (config.seconds > 0 && step_start - start >= std::chrono::duration<double>(config.seconds)) {
      break;
    }
    {
      neuronprof::StepTrace step_trace("train", step);
      std::vector<float> logits;
      {
        neuronprof::ScopedTrace t("model_build");
        MakeBatch(config.batch, rng, &x, &y);
        logits = model.Forward(x, config.batch);
      }
      {
        neuronprof::ScopedTrace t("loss_backward", {{"batch", config.batch}});
        loss = model.Backward(logits, y, config.batch);
      }
      {
        neuronprof::ScopedTrace t("optimizer_step");
        model.Step(0.05f);
        for (int i = 0; i < config.markers; ++i) {
          neuronprof::ScopedTrace inner("inner");
        }
      }
    }
    if (step % 500 == 0) {
      std::printf("step %lld  loss %.4f\n", static_cast<long long>(step), loss);
      std::fflush(stdout);
    }
    ++step;
    // Pace the loop like a real one waiting on data or a device; markers
    // only cost anything while a client captures.
    std::this_thread::sleep_until(step_start + step_period);
  }

  std::printf("stopping after %lld steps\n", static_cast<long long>(step));
  std::fflush(stdout);
  (*server)->Shutdown();
  return 0;
}
