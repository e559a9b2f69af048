// CUPTI activity records -> neuronprof DeviceEvents and RuntimeCalls. Pure
// translation: it reads records that are already in memory, so tests build
// records by hand and no GPU or driver is needed.
#ifndef NEURONPROF_SRC_COLLECTORS_CUPTI_ACTIVITY_TRANSLATOR_H_
#define NEURONPROF_SRC_COLLECTORS_CUPTI_ACTIVITY_TRANSLATOR_H_

#include <cupti_activity.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "neuronprof/device.h"
#include "src/collectors/cupti/gpu_properties.h"

namespace neuronprof {
namespace cupti {

// The record layouts this build reads (the current versions in the CUDA
// headers it was compiled with; libcupti of the same toolkit writes them).
using KernelRecord = CUpti_ActivityKernel10;
using MemcpyRecord = CUpti_ActivityMemcpy6;
using PeerMemcpyRecord = CUpti_ActivityMemcpyPtoP4;
using MemsetRecord = CUpti_ActivityMemset4;
using ApiRecord = CUpti_ActivityAPI;
using MemoryRecord = CUpti_ActivityMemory4;  // CUPTI_ACTIVITY_KIND_MEMORY2

// "HtoD", "DtoH", "DtoD", "PtoP", ...; "Unknown" otherwise.
std::string_view MemcpyKindName(uint8_t copy_kind);
// "pageable", "pinned", "device", "managed", ... (TSL's spelling).
std::string_view MemoryKindName(uint32_t memory_kind);
// Runtime/driver API name without CUPTI's version suffix:
// "cudaLaunchKernel" for cudaLaunchKernel_v7000. Empty when unknown.
std::string_view ApiName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
// The kernel_details stat in the form xprof's kernel stats parse:
// "regs:32 static_shared:0 dynamic_shared:1024 grid:4,1,1 block:256,1,1
//  occ_pct:100".
std::string KernelDetails(const KernelLaunch& launch, double occupancy_pct);

class ActivityTranslator {
 public:
  // `gpus` (by device id) gives occupancy; a device without an entry gets
  // kernels without occupancy figures. Both must outlive the translator.
  ActivityTranslator(DeviceActivitySink& sink, const std::map<int, GpuProperties>& gpus);

  // Sends one record to the sink. Kinds it does not read and records with
  // unusable times are counted, then reported by Finish().
  void Translate(const CUpti_Activity& record);
  // Reports the counted records as drops, each with its reason.
  void Finish();

  const std::set<int>& devices_seen() const { return devices_seen_; }
  uint64_t events() const { return events_; }
  uint64_t runtime_calls() const { return runtime_calls_; }

 private:
  void TranslateKernel(const KernelRecord& kernel);
  void TranslateMemcpy(const MemcpyRecord& copy);
  void TranslatePeerMemcpy(const PeerMemcpyRecord& copy);
  void TranslateMemset(const MemsetRecord& memset);
  void TranslateMemory(const MemoryRecord& memory);
  void TranslateApi(const ApiRecord& api, CUpti_CallbackDomain domain);
  bool UsableTimes(uint64_t start, uint64_t end);
  void AddCopy(DeviceEvent& event, uint8_t copy_kind, uint8_t src_kind, uint8_t dst_kind,
               uint8_t flags, uint32_t dest_device);
  std::string_view KernelName(const char* mangled);
  std::string_view CallName(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);

  DeviceActivitySink& sink_;
  const std::map<int, GpuProperties>& gpus_;
  std::set<int> devices_seen_;
  // CUPTI shares one name pointer among all records of a kernel, so each
  // name is demangled once.
  std::unordered_map<const char*, std::string> kernel_names_;
  // (domain << 32 | callback id) -> API name, looked up in libcupti once.
  std::unordered_map<uint64_t, std::string> call_names_;
  std::string scratch_;
  uint64_t events_ = 0;
  uint64_t runtime_calls_ = 0;
  uint64_t without_times_ = 0;
  uint64_t unknown_kind_ = 0;
};

}  // namespace cupti
}  // namespace neuronprof

#endif  // NEURONPROF_SRC_COLLECTORS_CUPTI_ACTIVITY_TRANSLATOR_H_
