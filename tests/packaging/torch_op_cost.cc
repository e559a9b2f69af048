// A libtorch program costing an op with no built-in formula through the
// installed package's RegisterOpCost (neuronprof/op_costs.h):
//   consumer_op_cost LOGDIR
// registers "aten::cumsum" as 3 FLOPs and 2 element reads/writes per
// element, runs 4 cumsums of a 64x64 float tensor under a kOperator
// capture, and exits 0 when Stop() wrote the capture. The FLOPs
// (3 * 4096 = 12288 per call) are checked in the file by the installed
// CLI's summary (tests/packaging/check_packaging.sh).
#include <neuronprof/neuronprof.h>
#include <neuronprof/torch.h>
#include <torch/torch.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s LOGDIR\n", argv[0]);
    return 2;
  }
  const absl::Status registered = neuronprof::RegisterOpCost(
      "aten::cumsum", [](const std::vector<neuronprof::OpCostInput>& in) {
        const int64_t n = in.at(0).Elements();
        return neuronprof::OpCostEstimate{3 * n, 2 * n * in.at(0).element_bytes};
      });
  if (!registered.ok() || !neuronprof::EnableTorchOperators().ok()) {
    std::fprintf(stderr, "RegisterOpCost / EnableTorchOperators: %s\n",
                 registered.ToString().c_str());
    return 1;
  }
  neuronprof::ProfilerOptions options;
  options.logdir = argv[1];
  options.profile_type = neuronprof::ProfileType::kOperator;
  options.port = 0;
  options.host_name = "op_cost";
  neuronprof::Profiler profiler(options);
  if (!profiler.status().ok()) {
    std::fprintf(stderr, "profiler: %s\n", profiler.status().ToString().c_str());
    return 1;
  }
  const torch::Tensor x = torch::ones({64, 64});
  for (int i = 0; i < 4; ++i) {
    neuronprof::StepTrace step("step", i);
    torch::Tensor y = torch::cumsum(x, 1);
  }
  const absl::StatusOr<neuronprof::ProfileResult> result = profiler.Stop();
  if (!result.ok()) {
    std::fprintf(stderr, "Stop(): %s\n", result.status().ToString().c_str());
    return 1;
  }
  std::printf("op_cost: %lld events in %s\n", static_cast<long long>(result->events),
              result->run_dir.c_str());
  return 0;
}
