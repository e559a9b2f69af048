// Fuzz target: a ProfileResponse as the capture client receives it from a
// server, read as the client reads it (ReadResponse and WriteHostFiles in
// src/rpc/capture_client.cc): its raw bytes through the client's scanner
// (rpc::ScanProfileResponse, split in two pieces: every metadata map entry
// checked, rewritten where protobuf would insert and erase it); with an
// xspace field, its bytes parsed, and parsed again with the Task
// Environment plane replaced (rpc::ReplaceTaskEnvironment); the first must
// be the XSpace protobuf's own parse of the response holds, and the second
// that space with only the one plane changed, else abort.
// Without one, the response parsed and rpc::ResponseSpace: "xplane.pb" tool
// data, else a file the server saved (never there: the saved folder is a
// path below /dev/null). Then what the client does with the space:
// xplane::AlignSpaceClock, xplane::NumEvents, EmptyCaptureReason, BaseHostName, and the Chrome
// trace it writes, built in memory. The xspace bytes also go through the
// client's fragment reader (rpc::ForEachSpaceFragment, a few events per
// fragment) into a Kineto trace in memory: what the parse takes, it must
// take too, handing over every event exactly once, else abort.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "neuronprof/capture.h"
#include "proto/profiler_service.pb.h"
#include "src/export/chrome_trace.h"
#include "src/export/kineto_trace.h"
#include "src/rpc/capture_client.h"
#include "src/rpc/response_scan.h"
#include "src/rpc/service_address.h"
#include "src/rpc/space_fragments.h"
#include "src/xplane/clock_offset.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/export/map_churn.h"
#include "tests/fuzz/quiet_protobuf.h"

namespace {

using neuronprof::testing::DeterministicBytes;
using tensorflow::profiler::XSpace;

// The XSpace of the scanned bytes, as the client parses it; false if the
// client would refuse it.
bool ScannedSpace(const neuronprof::rpc::ScannedResponse& scanned, const uint8_t* data, size_t size,
                  XSpace* space) {
  if (!neuronprof::rpc::ParsePieces(scanned.xspace, space)) return false;
  // The scan reads what protobuf reads, without its quadratic map parse
  // (protobuf may refuse other fields the scan skips: bad UTF-8, say).
  tensorflow::ProfileResponse response;
  if (response.ParseFromArray(data, static_cast<int>(size)) &&
      DeterministicBytes(response.xspace()) != DeterministicBytes(*space)) {
    std::abort();
  }
  tensorflow::profiler::XPlane environment;
  if (scanned.task_environment) {
    environment = *scanned.task_environment;
  } else {
    environment.set_id(scanned.planes);
    environment.set_name(neuronprof::xplane::kTaskEnvironmentPlaneName);
  }
  neuronprof::xplane::RecordClockOffset(neuronprof::xplane::ClockOffset{400, 7}, &environment);
  // Replacing that one plane keeps the rest whole: the file the client
  // writes is this space with the new plane, whatever the encoding.
  std::string storage;
  XSpace replaced;
  if (!neuronprof::rpc::ParsePieces(
          neuronprof::rpc::ReplaceTaskEnvironment(scanned, environment, &storage), &replaced)) {
    std::abort();
  }
  const int planes = space->planes_size() + (scanned.task_environment ? 0 : 1);
  if (replaced.planes_size() != planes || replaced.hostnames_size() != space->hostnames_size() ||
      replaced.warnings_size() != space->warnings_size() ||
      neuronprof::xplane::NumEvents(replaced) != neuronprof::xplane::NumEvents(*space)) {
    std::abort();
  }
  return true;
}

// The scanned xspace bytes fragment by fragment, as the client writes its
// traces from them; `parsed`: whether (and what) the whole parse gave.
void CheckFragments(const neuronprof::rpc::ScannedResponse& scanned, const XSpace* parsed) {
  int64_t events = 0;
  neuronprof::exporter::StringSink kineto;
  neuronprof::exporter::KinetoTraceStream stream(&kineto);
  const absl::Status walked =
      neuronprof::rpc::ForEachSpaceFragment(scanned.xspace, 3, [&](const XSpace& fragment) {
        events += neuronprof::xplane::NumEvents(fragment);
        return stream.Append(fragment);
      });
  if (parsed == nullptr) return;  // Refused or not: it must not crash.
  if (!walked.ok() || events != neuronprof::xplane::NumEvents(*parsed)) std::abort();
  stream.Finish().IgnoreError();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The client first scans the raw bytes, in the pieces gRPC hands over
  // (src/rpc/response_scan): cut where the first byte says.
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t cut = size > 0 ? data[0] % (size + 1) : 0;
  const neuronprof::rpc::BytePieces pieces = {all.substr(0, cut), all.substr(cut)};
  auto scanned = neuronprof::rpc::ScanProfileResponse(pieces, "fuzz");
  if (!scanned.ok()) return 0;
  neuronprof::rpc::ServiceAddress address;
  address.address = "localhost:9012";
  address.host = "localhost";
  address.port = 9012;
  XSpace space;
  if (scanned->xspace_fields > 0) {
    const bool parsed = ScannedSpace(*scanned, data, size, &space);
    CheckFragments(*scanned, parsed ? &space : nullptr);
    if (!parsed) return 0;
  } else {
    tensorflow::ProfileResponse response;
    if (!response.ParseFromArray(data, static_cast<int>(size))) return 0;
    // ENOTDIR for any file below it: no saved profile is ever found.
    std::string saved_file;
    auto parsed = neuronprof::rpc::ResponseSpace(&response, address, "/dev/null/fuzz", &saved_file);
    if (!parsed.ok()) return 0;
    space = std::move(*parsed);
  }
  // The client puts a parsed space on its clock, and info reads it back.
  neuronprof::xplane::AlignSpaceClock(neuronprof::xplane::ClockOffset{400, 7}, &space);
  neuronprof::xplane::ReadClockOffset(space);
  neuronprof::CaptureOptions options;
  options.service_addresses = {"localhost:9012"};
  options.logdir = "unused";
  options.duration_ms = 1000;
  if (neuronprof::xplane::NumEvents(space) == 0) {
    neuronprof::rpc::EmptyCaptureReason(options, address, &space);
    return 0;
  }
  neuronprof::rpc::BaseHostName(space, address, true, neuronprof::rpc::LongestFileSuffix(options));
  neuronprof::exporter::StringSink json;
  neuronprof::exporter::WriteChromeTrace(space, &json).IgnoreError();
  return 0;
}
