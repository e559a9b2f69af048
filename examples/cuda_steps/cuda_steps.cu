// A few CUDA kernels and host<->device copies inside neuronprof steps,
// profiled through CUPTI. Needs an NVIDIA GPU and driver to run:
//
//   cuda_steps [logdir] [--steps N] [--launches K] [--no-profile]
//   cuda_steps --serve PORT --seconds S [--launches K] [--allowed_root DIR]
//
// writes <logdir>/plugins/profile/<run>/<host>.xplane.pb with
// "/device:GPU:0" (one line per stream: saxpy, block_sum, scale kernels,
// MemcpyHtoD / MemcpyDtoH copies, a Memset) and the CUDA runtime calls on
// the host threads' lines, linked to their kernels. --no-profile runs the
// same loop without a capture, to compare the wall time per step;
// --launches K adds K launches of an empty kernel to each step, so the
// difference per launch is CUPTI's cost per kernel (docs/PERFORMANCE.md).
// --serve runs the loop for S seconds behind a ProfilerServer on PORT
// (0 = any free one, printed as "neuronprof server listening on
// 127.0.0.1:<port>") and records only the windows a client asks for:
//
//   build/tools/neuronprof capture --service_addr localhost:<port> \
//       --logdir logs --duration_ms 500
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "neuronprof/cupti.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/server.h"

namespace {

__global__ void saxpy(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// One partial sum per block, in dynamic shared memory.
__global__ void block_sum(int n, const float* x, float* partial) {
  extern __shared__ float tile[];
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) tile[threadIdx.x] += tile[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = tile[0];
}

__global__ void scale(int n, float factor, float* x) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    x[i] *= factor;
  }
}

__global__ void empty() {}

bool Check(cudaError_t error, const char* what) {
  if (error == cudaSuccess) return true;
  std::fprintf(stderr, "cuda_steps: %s failed: %s\n", what, cudaGetErrorString(error));
  return false;
}

struct Buffers {
  float* host_x = nullptr;         // Pinned: async copies.
  std::vector<float> host_result;  // Pageable: a synchronous copy.
  float* x = nullptr;
  float* y = nullptr;
  float* partial = nullptr;
  float* z = nullptr;  // The side stream's own data: no race with compute.
};

constexpr int kN = 1 << 22;
constexpr int kBlock = 256;
constexpr int kBlocks = (kN + kBlock - 1) / kBlock;

bool RunStep(int step, int launches, Buffers& b, cudaStream_t compute, cudaStream_t side) {
  neuronprof::StepTrace step_trace("train", step);
  {
    neuronprof::ScopedTrace trace("copy_inputs");
    if (!Check(cudaMemcpyAsync(b.x, b.host_x, kN * sizeof(float), cudaMemcpyHostToDevice, compute),
               "cudaMemcpyAsync")) {
      return false;
    }
    if (!Check(cudaMemsetAsync(b.y, 0, kN * sizeof(float), compute), "cudaMemsetAsync")) {
      return false;
    }
  }
  {
    neuronprof::ScopedTrace trace("forward");
    saxpy<<<kBlocks, kBlock, 0, compute>>>(kN, 2.0f, b.x, b.y);
    block_sum<<<kBlocks, kBlock, kBlock * sizeof(float), compute>>>(kN, b.y, b.partial);
    scale<<<132, 512, 0, side>>>(kN, 0.5f, b.z);
    for (int i = 0; i < launches; ++i) empty<<<1, 32, 0, compute>>>();
    if (!Check(cudaGetLastError(), "kernel launch")) return false;
  }
  {
    neuronprof::ScopedTrace trace("copy_results");
    if (!Check(cudaMemcpy(b.host_result.data(), b.partial, kBlocks * sizeof(float),
                          cudaMemcpyDeviceToHost),
               "cudaMemcpy")) {
      return false;
    }
  }
  return Check(cudaStreamSynchronize(side), "cudaStreamSynchronize");
}

struct Config {
  std::string logdir = "./logs";
  int steps = 10;
  int launches = 0;
  bool profile = true;
  int serve_port = -1;  // >= 0: --serve.
  double seconds = 0;
  std::string allowed_root = "./logs";
};

bool ParseArgs(int argc, char** argv, Config* config) {
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--no-profile") == 0) {
      config->profile = false;
    } else if (std::strcmp(argv[i], "--steps") == 0 && has_value) {
      config->steps = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--launches") == 0 && has_value) {
      config->launches = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--serve") == 0 && has_value) {
      config->serve_port = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--seconds") == 0 && has_value) {
      config->seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--allowed_root") == 0 && has_value) {
      config->allowed_root = argv[++i];
    } else if (argv[i][0] == '-') {
      return false;
    } else {
      config->logdir = argv[i];
    }
  }
  return config->steps >= 0 && config->launches >= 0 &&
         (config->serve_port < 0 || config->seconds > 0);
}

// Steps for `seconds` while a ProfilerServer records what clients ask for.
int Serve(const Config& config, Buffers& b, cudaStream_t compute, cudaStream_t side) {
  neuronprof::ProfilerServerOptions options;
  options.port = config.serve_port;
  options.allowed_root = config.allowed_root;
  auto server = neuronprof::ProfilerServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "cuda_steps: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::printf("neuronprof server listening on 127.0.0.1:%d\n", (*server)->port());
  std::fflush(stdout);
  const auto start = std::chrono::steady_clock::now();
  int step = 0;
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() <
         config.seconds) {
    if (!RunStep(step++, config.launches, b, compute, side)) return 1;
  }
  std::printf("cuda_steps: served %d steps\n", step);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  if (!ParseArgs(argc, argv, &config)) {
    std::fprintf(stderr,
                 "usage: %s [logdir] [--steps N] [--launches K] [--no-profile]\n"
                 "       %s --serve PORT --seconds S [--launches K] "
                 "[--allowed_root DIR]\n",
                 argv[0], argv[0]);
    return 2;
  }
  const bool profile = config.profile;

  // Before the first CUDA call, so CUPTI sees the context being created.
  if (profile) {
    absl::Status enabled = neuronprof::EnableCuptiCollector();
    if (!enabled.ok()) {
      std::fprintf(stderr, "cuda_steps: %s\n", enabled.ToString().c_str());
      return 1;
    }
  }
  if (!Check(cudaSetDevice(0), "cudaSetDevice")) return 1;
  Buffers b;
  b.host_result.resize(kBlocks);
  cudaStream_t compute, side;
  if (!Check(cudaMallocHost(&b.host_x, kN * sizeof(float)), "cudaMallocHost") ||
      !Check(cudaMalloc(&b.x, kN * sizeof(float)), "cudaMalloc") ||
      !Check(cudaMalloc(&b.y, kN * sizeof(float)), "cudaMalloc") ||
      !Check(cudaMalloc(&b.partial, kBlocks * sizeof(float)), "cudaMalloc") ||
      !Check(cudaMalloc(&b.z, kN * sizeof(float)), "cudaMalloc") ||
      !Check(cudaMemset(b.z, 0, kN * sizeof(float)), "cudaMemset") ||
      !Check(cudaStreamCreate(&compute), "cudaStreamCreate") ||
      !Check(cudaStreamCreate(&side), "cudaStreamCreate")) {
    return 1;
  }
  for (int i = 0; i < kN; ++i) b.host_x[i] = 1.0f;
  // Warm-up outside the capture: module loading, first-launch costs.
  if (!RunStep(-1, config.launches, b, compute, side)) return 1;
  if (config.serve_port >= 0) return Serve(config, b, compute, side);

  neuronprof::ProfilerOptions options;
  options.logdir = config.logdir;
  options.port = 0;
  std::unique_ptr<neuronprof::Profiler> profiler;
  if (profile) profiler = std::make_unique<neuronprof::Profiler>(options);

  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < config.steps; ++step) {
    if (!RunStep(step, config.launches, b, compute, side)) return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "cuda_steps: %d steps of %d kernels, %.1f us per step (%s), "
      "sum of block 0 = %g\n",
      config.steps, 3 + config.launches, 1e6 * seconds / std::max(config.steps, 1),
      profile ? "profiled" : "not profiled", b.host_result[0]);

  int exit_code = 0;
  if (profiler) {
    const auto stop_start = std::chrono::steady_clock::now();
    absl::StatusOr<neuronprof::ProfileResult> result = profiler->Stop();
    std::printf(
        "cuda_steps: Stop() took %.1f ms\n",
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - stop_start)
            .count());
    if (!result.ok()) {
      std::fprintf(stderr, "cuda_steps: %s\n", result.status().ToString().c_str());
      exit_code = 1;
    } else {
      std::printf("cuda_steps: %lld events, %lld dropped, profile in %s\n",
                  static_cast<long long>(result->events),
                  static_cast<long long>(result->dropped_events), result->run_dir.c_str());
      for (const std::string& warning : result->warnings) {
        std::printf("  warning: %s\n", warning.c_str());
      }
    }
  }
  cudaFree(b.z);
  cudaFree(b.partial);
  cudaFree(b.y);
  cudaFree(b.x);
  cudaFreeHost(b.host_x);
  return exit_code;
}
