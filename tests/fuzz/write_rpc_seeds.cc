// Writes the seed corpus of the RPC fuzz targets from a real capture:
//   write_rpc_seeds CAPTURE.xplane.pb CORPUS_DIR
// CORPUS_DIR/response/: the capture in the response (emit_xspace), as
// "xplane.pb" tool data (older TSL servers), and an empty trace;
// CORPUS_DIR/request/: what neuronprof capture and TSL clients send.
// The committed tests/fuzz/corpus was made with it (see tests/fuzz/README.md).
#include <cstdio>
#include <string>

#include "proto/profiler_service.pb.h"
#include "src/export/atomic_file.h"
#include "src/export/xspace_file.h"

namespace {

bool Write(const std::string& path, const google::protobuf::MessageLite& message) {
  std::string bytes;
  if (!message.SerializeToString(&bytes)) return false;
  auto s = neuronprof::exporter::WriteFileAtomically(path, bytes);
  if (!s.ok()) std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
  return s.ok();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s CAPTURE.xplane.pb CORPUS_DIR\n", argv[0]);
    return 2;
  }
  auto space = neuronprof::exporter::ReadXSpaceFile(argv[1]);
  if (!space.ok()) {
    std::fprintf(stderr, "%s\n", std::string(space.status().message()).c_str());
    return 1;
  }
  const std::string dir = argv[2];
  for (const char* sub : {"/response", "/request"}) {
    if (!neuronprof::exporter::MakeDirectories(dir + sub).ok()) return 1;
  }
  bool ok = true;
  tensorflow::ProfileResponse in_response;
  *in_response.mutable_xspace() = *space;
  ok &= Write(dir + "/response/xspace.pb", in_response);
  tensorflow::ProfileResponse tool_data;
  auto* tool = tool_data.add_tool_data();
  tool->set_name("host.xplane.pb");
  tool->set_data(space->SerializeAsString());
  ok &= Write(dir + "/response/tool_data.pb", tool_data);
  tensorflow::ProfileResponse empty;
  empty.set_empty_trace(true);
  empty.mutable_xspace()->add_warnings("no neuronprof markers ran during the 1 ms window");
  ok &= Write(dir + "/response/empty_trace.pb", empty);

  // As BuildProfileRequest (src/rpc/capture_client.cc) sends them.
  tensorflow::ProfileRequest emit;
  emit.set_duration_ms(1);
  emit.set_host_name("localhost:9012");
  emit.set_session_id("2026_01_02_03_04_05");
  emit.set_emit_xspace(true);
  emit.add_tools("xplane.pb");
  auto* opts = emit.mutable_opts();
  opts->set_version(1);
  opts->set_duration_ms(1);
  opts->set_host_tracer_level(2);
  opts->set_device_tracer_level(1);
  ok &= Write(dir + "/request/emit_xspace.pb", emit);
  // TSL-style: saved by the server under repository_root ("$ROOT" is the
  // fuzz target's allowed_root).
  tensorflow::ProfileRequest save = emit;
  save.set_emit_xspace(false);
  save.set_repository_root("$ROOT/plugins/profile");
  save.mutable_opts()->set_start_timestamp_ns(1);
  (*save.mutable_opts()->mutable_advanced_configuration())["override_hostname"].set_string_value(
      "worker0");
  ok &= Write(dir + "/request/save_under_root.pb", save);
  tensorflow::ProfileRequest outside = save;
  outside.set_repository_root("$ROOT/../outside");
  ok &= Write(dir + "/request/outside_root.pb", outside);
  // neuronprof capture --flight_recorder: the flight recorder's key, and a
  // value the server refuses.
  tensorflow::ProfileRequest flight = emit;
  (*flight.mutable_opts()->mutable_advanced_configuration())["neuronprof_flight_recorder"]
      .set_bool_value(true);
  ok &= Write(dir + "/request/flight_recorder_now.pb", flight);
  (*flight.mutable_opts()->mutable_advanced_configuration())["neuronprof_flight_recorder"]
      .set_string_value("yes");
  ok &= Write(dir + "/request/flight_recorder_bad_value.pb", flight);
  return ok ? 0 : 1;
}
