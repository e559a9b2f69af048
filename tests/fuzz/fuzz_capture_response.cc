// Fuzz target: a ProfileResponse as the capture client receives it from a
// server: its raw bytes through the client's scanner (rpc::
// ScanProfileResponse, split in two pieces), then parsed, through
// rpc::ResponseSpace (src/rpc/
// capture_client.cc): the XSpace in the response, else "xplane.pb" tool
// data, else a file the server saved (never there: the saved folder is a
// path below /dev/null). Then what the client does with the space:
// xplane::NumEvents, EmptyCaptureReason, BaseHostName, and the files
// WriteProfileFiles makes (the XSpace bytes and the Chrome trace), built in
// memory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "neuronprof/capture.h"
#include "proto/profiler_service.pb.h"
#include "src/export/chrome_trace.h"
#include "src/rpc/capture_client.h"
#include "src/rpc/response_scan.h"
#include "src/rpc/service_address.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/fuzz/quiet_protobuf.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The client first scans the raw bytes, in the pieces gRPC hands over
  // (src/rpc/response_scan): cut where the first byte says.
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  const neuronprof::rpc::BytePieces pieces = {all.substr(0, cut), all.substr(cut)};
  auto scanned = neuronprof::rpc::ScanProfileResponse(pieces, "fuzz");
  if (scanned.ok() && scanned->xspace_fields == 1) {
    tensorflow::profiler::XSpace from_pieces;
    neuronprof::rpc::ParsePieces(scanned->xspace, &from_pieces);
  }
  tensorflow::ProfileResponse response;
  if (!response.ParseFromArray(data, static_cast<int>(size))) return 0;
  neuronprof::rpc::ServiceAddress address;
  address.address = "localhost:9012";
  address.host = "localhost";
  address.port = 9012;
  // ENOTDIR for any file below it: no saved profile is ever found.
  std::string saved_file;
  auto space = neuronprof::rpc::ResponseSpace(&response, address, "/dev/null/fuzz",
                                              &saved_file);
  if (!space.ok()) return 0;
  neuronprof::CaptureOptions options;
  options.service_addresses = {"localhost:9012"};
  options.logdir = "unused";
  options.duration_ms = 1000;
  if (neuronprof::xplane::NumEvents(*space) == 0) {
    neuronprof::rpc::EmptyCaptureReason(options, address, &*space);
    return 0;
  }
  neuronprof::rpc::BaseHostName(*space, address, true,
                                neuronprof::rpc::LongestFileSuffix(options));
  std::string bytes;
  space->SerializeToString(&bytes);
  neuronprof::exporter::StringSink json;
  neuronprof::exporter::WriteChromeTrace(*space, &json).IgnoreError();
  return 0;
}
