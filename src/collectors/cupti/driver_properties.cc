#include "src/collectors/cupti/driver_properties.h"

#include <cuda.h>
#include <dlfcn.h>

#include <string>

#include "absl/strings/str_cat.h"

namespace neuronprof {
namespace cupti {
namespace {

// The few driver entry points we call, resolved by name.
struct DriverApi {
  CUresult (*init)(unsigned int) = nullptr;
  CUresult (*device_count)(int*) = nullptr;
  CUresult (*device_get)(CUdevice*, int) = nullptr;
  CUresult (*device_name)(char*, int, CUdevice) = nullptr;
  CUresult (*attribute)(int*, CUdevice_attribute, CUdevice) = nullptr;
  CUresult (*total_mem)(size_t*, CUdevice) = nullptr;
};

template <typename Fn>
bool Resolve(void* library, const char* symbol, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, symbol));
  return *fn != nullptr;
}

absl::StatusOr<DriverApi> LoadDriver(const std::string& name = kDriverLibrary) {
  // Kept loaded for the process: the app uses CUDA anyway.
  void* library = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* error = dlerror();
    return absl::FailedPreconditionError(
        absl::StrCat("no NVIDIA driver: ", name, " cannot be loaded (",
                     error ? error : "unknown error", "); CUPTI needs a GPU and its driver"));
  }
  DriverApi api;
  if (!Resolve(library, "cuInit", &api.init) ||
      !Resolve(library, "cuDeviceGetCount", &api.device_count) ||
      !Resolve(library, "cuDeviceGet", &api.device_get) ||
      !Resolve(library, "cuDeviceGetName", &api.device_name) ||
      !Resolve(library, "cuDeviceGetAttribute", &api.attribute) ||
      !Resolve(library, "cuDeviceTotalMem_v2", &api.total_mem)) {
    return absl::FailedPreconditionError(
        absl::StrCat(name, " lacks a driver entry point neuronprof needs"));
  }
  return api;
}

}  // namespace

absl::Status CheckDriverPresent(const std::string& library) { return LoadDriver(library).status(); }

absl::StatusOr<std::map<int, GpuProperties>> ReadGpuProperties() {
  absl::StatusOr<DriverApi> api = LoadDriver();
  if (!api.ok()) return api.status();
  if (CUresult r = api->init(0); r != CUDA_SUCCESS) {
    return absl::FailedPreconditionError(
        absl::StrCat("cuInit failed with CUresult ", static_cast<int>(r)));
  }
  int count = 0;
  if (api->device_count(&count) != CUDA_SUCCESS) count = 0;
  std::map<int, GpuProperties> gpus;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device;
    if (api->device_get(&device, ordinal) != CUDA_SUCCESS) continue;
    GpuProperties& gpu = gpus[ordinal];
    char name[256] = {};
    if (api->device_name(name, sizeof(name) - 1, device) == CUDA_SUCCESS) {
      gpu.name = name;
    }
    auto read = [&](CUdevice_attribute attribute) {
      int value = 0;
      return api->attribute(&value, attribute, device) == CUDA_SUCCESS ? value : 0;
    };
    gpu.compute_major = read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    gpu.compute_minor = read(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    gpu.sm_count = read(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    gpu.max_threads_per_block = read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    gpu.max_threads_per_sm = read(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    gpu.max_blocks_per_sm = read(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    gpu.regs_per_block = read(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    gpu.regs_per_sm = read(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    gpu.warp_size = read(CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    gpu.shared_memory_per_block = read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    gpu.shared_memory_per_block_optin = read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    gpu.shared_memory_per_sm = read(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    gpu.reserved_shared_memory_per_block =
        read(CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
    gpu.clock_rate_khz = read(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    gpu.memory_clock_khz = read(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    gpu.memory_bus_width_bits = read(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    size_t bytes = 0;
    if (api->total_mem(&bytes, device) == CUDA_SUCCESS) {
      gpu.memory_bytes = static_cast<int64_t>(bytes);
    }
  }
  return gpus;
}

void ReportGpuProperties(int device_id, const GpuProperties& gpu, DeviceActivitySink& sink) {
  // Stat names of TSL's GPU device planes, which xprof's overview and
  // roofline pages read.
  sink.SetDeviceProperty(device_id, "device_vendor", "Nvidia");
  if (!gpu.name.empty()) {
    sink.SetDeviceProperty(device_id, "gpu_device_name", gpu.name);
  }
  auto set_if_known = [&](std::string_view key, int64_t value) {
    if (value > 0) sink.SetDeviceProperty(device_id, key, value);
  };
  set_if_known("clock_rate", gpu.clock_rate_khz);
  set_if_known("core_count", gpu.sm_count);
  set_if_known("memory_bandwidth", gpu.MemoryBandwidthBytesPerSecond());
  set_if_known("memory_size", gpu.memory_bytes);
  set_if_known("compute_cap_major", gpu.compute_major);
  if (gpu.compute_major > 0) {
    sink.SetDeviceProperty(device_id, "compute_cap_minor", int64_t{gpu.compute_minor});
  }
}

}  // namespace cupti
}  // namespace neuronprof
