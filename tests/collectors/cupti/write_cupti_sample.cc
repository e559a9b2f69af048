// Writes an .xplane.pb whose GPU planes come from CUPTI activity records
// built in memory and passed through the real translator and device planes,
// so tests/interop/test_cupti_xprof.py can ask xprof's own tools (kernel
// stats, trace viewer) to read them. No GPU needed.
//
//   write_cupti_sample OUT.xplane.pb
#include <cupti_activity.h>
#include <cupti_runtime_cbid.h>

#include <cstdio>
#include <map>
#include <string>

#include "src/collectors/cupti/activity_translator.h"
#include "src/collectors/cupti/driver_properties.h"
#include "src/collectors/device/device_activity.h"
#include "src/collectors/device/device_planes.h"
#include "src/export/atomic_file.h"
#include "src/xplane/xplane_builder.h"
#include "tests/collectors/cupti/cupti_test_gpu.h"

namespace {

using neuronprof::cupti::ApiRecord;
using neuronprof::cupti::GpuProperties;
using neuronprof::cupti::KernelRecord;
using neuronprof::cupti::MemcpyRecord;
using neuronprof::testing::AsActivity;
using neuronprof::testing::H100;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT.xplane.pb\n", argv[0]);
    return 2;
  }
  const int64_t start = 1'700'000'000'000'000'000;
  constexpr int64_t kSkew = 5000;  // CUPTI's clock ahead of the host's.
  constexpr int kSteps = 4;
  constexpr int64_t kStepNs = 100'000;
  tensorflow::profiler::XSpace space;
  neuronprof::xplane::SetProfileTimes(&space, start, start + kSteps * kStepNs + 1'000'000);

  neuronprof::collectors::DeviceActivityBuffer buffer;
  buffer.AddClockSync(start + kSkew, start);
  const std::map<int, GpuProperties> gpus = {{0, H100()}};
  neuronprof::cupti::ActivityTranslator translator(buffer, gpus);
  uint32_t correlation = 1;
  for (int step = 0; step < kSteps; ++step) {
    const uint64_t t = start + kSkew + step * kStepNs;
    // cudaMemcpyAsync HtoD, then two kernels launched with cudaLaunchKernel.
    ApiRecord api{};
    api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    api.threadId = 4321;
    api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020;
    api.start = t + 1000;
    api.end = t + 3000;
    api.correlationId = correlation;
    translator.Translate(AsActivity(api));
    MemcpyRecord copy{};
    copy.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    copy.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
    copy.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
    copy.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    copy.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    copy.bytes = 1 << 20;
    copy.start = t + 4000;
    copy.end = t + 14000;
    copy.streamId = 7;
    copy.correlationId = correlation++;
    translator.Translate(AsActivity(copy));

    const struct {
      const char* name;
      int block, regs, dynamic_shared;
      uint64_t offset, duration;
    } kernels[] = {{"_Z5saxpyifPKfPf", 256, 32, 0, 20000, 8000},
                   {"_Z9block_sumiPKfPf", 256, 24, 1024, 30000, 12000}};
    for (const auto& k : kernels) {
      api.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
      api.start = t + k.offset - 6000;
      api.end = t + k.offset - 4000;
      api.correlationId = correlation;
      translator.Translate(AsActivity(api));
      KernelRecord kernel{};
      kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      kernel.name = k.name;
      kernel.streamId = 7;
      kernel.correlationId = correlation++;
      kernel.start = t + k.offset;
      kernel.end = t + k.offset + k.duration;
      kernel.gridX = 16384;
      kernel.gridY = kernel.gridZ = 1;
      kernel.blockX = k.block;
      kernel.blockY = kernel.blockZ = 1;
      kernel.registersPerThread = static_cast<uint16_t>(k.regs);
      kernel.dynamicSharedMemory = k.dynamic_shared;
      translator.Translate(AsActivity(kernel));
    }
  }
  translator.Finish();
  neuronprof::cupti::ReportGpuProperties(0, gpus.at(0), buffer);

  neuronprof::collectors::CollectStats stats;
  neuronprof::collectors::AddDeviceActivity("cupti", "GPU", buffer.activity(), &space, &stats);
  std::string bytes;
  if (!space.SerializeToString(&bytes)) return 1;
  absl::Status written = neuronprof::exporter::WriteFileAtomically(argv[1], bytes);
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", written.ToString().c_str());
    return 1;
  }
  std::printf("%lld device events, %lld dropped\n", static_cast<long long>(stats.events),
              static_cast<long long>(stats.dropped));
  return 0;
}
