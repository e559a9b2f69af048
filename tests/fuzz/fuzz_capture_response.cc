// Fuzz target: a ProfileResponse as the capture client receives it from a
// server (src/rpc/capture_client.cc). The client's ResponseSpace() is
// internal to capture_client.cc, so its in-memory paths are followed here
// (the XSpace in the response, else "xplane.pb" tool data); then what the
// client does with the space: CountEvents, EmptyCaptureReason,
// BaseHostName, and the files WriteProfileFiles makes (the XSpace bytes and
// the Chrome trace), built in memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "neuronprof/capture.h"
#include "proto/profiler_service.pb.h"
#include "src/export/chrome_trace.h"
#include "src/rpc/capture_client.h"
#include "src/rpc/service_address.h"
#include "tests/fuzz/quiet_protobuf.h"

namespace {

using tensorflow::profiler::XSpace;

// false when the response carries no space the client can read.
bool SpaceOf(tensorflow::ProfileResponse* response, XSpace* space) {
  if (response->has_xspace()) {
    space->Swap(response->mutable_xspace());
    return true;
  }
  for (const auto& tool : response->tool_data()) {
    if (absl::EndsWith(tool.name(), "xplane.pb")) return space->ParseFromString(tool.data());
  }
  return response->empty_trace();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tensorflow::ProfileResponse response;
  if (!response.ParseFromArray(data, static_cast<int>(size))) return 0;
  XSpace space;
  if (!SpaceOf(&response, &space)) return 0;
  neuronprof::CaptureOptions options;
  options.service_addresses = {"localhost:9012"};
  options.logdir = "unused";
  options.duration_ms = 1000;
  neuronprof::rpc::ServiceAddress address;
  address.address = "localhost:9012";
  address.host = "localhost";
  address.port = 9012;
  if (neuronprof::rpc::CountEvents(space) == 0) {
    neuronprof::rpc::EmptyCaptureReason(options, address, &space);
    return 0;
  }
  neuronprof::rpc::BaseHostName(space, address, true);
  std::string bytes;
  space.SerializeToString(&bytes);
  neuronprof::exporter::XSpaceToChromeTraceJson(space);
  return 0;
}
