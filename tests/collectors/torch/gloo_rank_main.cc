// One rank of a real two-process Gloo job, for the multi-rank summary's
// test (tests/collectors/torch/rank_summary_test.cc):
//   gloo_rank_main STORE_FILE LOGDIR RANK STEPS
// Each step (a StepTrace) runs a matmul, then an all_reduce through the
// dispatcher, as torch.distributed calls it. Rank 1 is made the straggler
// by causality, not by timing: it enqueues step s's all_reduce only after
// rank 0 has enqueued it (a store key rank 0 sets once its enqueue
// returned), so rank 0 always waits for rank 1. Writes
// LOGDIR/plugins/profile/job/node_rank<RANK>.xplane.pb. Exit 0 when done.
#include <torch/torch.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/Ops.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s STORE_FILE LOGDIR RANK STEPS\n", argv[0]);
    return 2;
  }
  const int rank = std::atoi(argv[3]);
  const int steps = std::atoi(argv[4]);
  try {
    if (!neuronprof::EnableTorchOperators().ok()) return 3;
    auto store = c10::make_intrusive<::c10d::FileStore>(argv[1], 2);
    auto gloo_options = ::c10d::ProcessGroupGloo::Options::create();
    gloo_options->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    auto pg = c10::make_intrusive<::c10d::ProcessGroupGloo>(store, rank, 2, gloo_options);

    neuronprof::ProfilerOptions options;
    options.logdir = argv[2];
    options.run_name = "job";
    options.host_name = "node";
    options.port = 0;
    options.profile_type = neuronprof::ProfileType::kOperator;
    options.write_chrome_trace = false;
    options.write_pytorch_trace = false;
    options.rank = rank;
    options.world_size = 2;
    options.backend = "gloo";
    neuronprof::Profiler profiler(options);
    if (!profiler.status().ok()) {
      std::fprintf(stderr, "%s\n", std::string(profiler.status().message()).c_str());
      return 4;
    }
    torch::Tensor weight = torch::ones({128, 128});
    for (int s = 0; s < steps; ++s) {
      neuronprof::StepTrace step("train", s);
      std::vector<at::Tensor> grads{torch::mm(weight, weight)};
      const std::string key = "enqueued_" + std::to_string(s);
      if (rank == 1) store->get(key);  // Blocks until rank 0 has enqueued.
      auto work = ::c10d::ops::allreduce(pg, grads);
      if (rank == 0) store->set(key, std::vector<uint8_t>{1});
      work->wait();
    }
    auto result = profiler.Stop();
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", std::string(result.status().message()).c_str());
      return 5;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: %s\n", rank, e.what());
    return 6;
  }
}
