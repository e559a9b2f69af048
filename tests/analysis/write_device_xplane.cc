// Writes a GPU capture built by tests/analysis/device_space.h as
// <dir>/<host>.xplane.pb: an H100 (cc 9.0) running one fp32 addmm with an
// odd N and 60 short, spaced kernels, plus a copy. Read by the summary CLI
// test (kernel table, recommendations):
//   write_device_xplane DIR HOST
#include <cstdio>
#include <string>

#include "src/export/logdir.h"
#include "tests/analysis/device_space.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s DIR HOST\n", argv[0]);
    return 2;
  }
  neuronprof::testing::DeviceSpaceBuilder b;
  b.GpuProperties(9, 0, 132, 1980000, 3350000000000)
      .Step(0, 1000, 0)
      .Addmm(20, 920, 64, 100, 784)
      .Kernel("ampere_sgemm_64x64_nn", 30, 100, 40,
              "regs:128 static_shared:0 dynamic_shared:16384 grid:2,1,1 block:128,1,1 "
              "occ_pct:25")
      .Copy("MemcpyHtoD", 25, 50, 100, 1 << 20);
  for (int i = 0; i < 60; ++i) b.Kernel("vectorized_elementwise_kernel", 900, 200 + 10 * i, 2);
  const auto space = b.Build();
  neuronprof::exporter::ExportOptions options;
  options.chrome_trace = false;
  auto files = neuronprof::exporter::WriteProfileFiles(space, argv[1], argv[2], options);
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  for (const std::string& file : *files) std::printf("%s\n", file.c_str());
  return 0;
}
