// The tensorflow.ProfilerService server, driven by the generated C++ gRPC
// client over 127.0.0.1: captures returned and saved, validation, one
// capture at a time, Terminate, client cancellation and port handling, and
// hostile clients: links swapped in during the window, huge fields,
// unparsable requests, a full disk.
#include <arpa/inet.h>
#include <dirent.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <climits>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "neuronprof/neuronprof.h"
#include "neuronprof/server.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/core/clock.h"
#include "src/export/atomic_file.h"
#include "src/export/gzip.h"
#include "src/rpc/clock_probe.h"
#include "src/rpc/profile_call_limit.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/file_size_limit.h"
#include "tests/export/trace_text.h"
#include "tests/rpc/rpc_test_util.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using tensorflow::ProfileRequest;
using tensorflow::ProfileResponse;
using tensorflow::ProfilerService;
using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using testing::Contains;
using testing::Exists;
using testing::HasEvent;
using testing::kBound;
using testing::ListenOnFreeLoopbackPort;
using testing::TempDir;
using testing::WaitFor;

bool CaptureRunning() { return rpc::RunningCapturesForTesting() > 0; }

struct TestServer {
  explicit TestServer(const std::string& allowed_root, ProfilerServerOptions options = {})
      : server(testing::StartTestServer(allowed_root, std::move(options))) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(INT_MAX);
    auto channel = grpc::CreateCustomChannel("127.0.0.1:" + std::to_string(server->port()),
                                             grpc::InsecureChannelCredentials(), args);
    stub = ProfilerService::NewStub(channel);
  }

  grpc::Status Profile(const ProfileRequest& request, ProfileResponse* response,
                       std::chrono::milliseconds client_deadline = kBound * 3) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + client_deadline);
    return stub->Profile(&context, request, response);
  }

  grpc::Status Terminate(const std::string& session_id) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kBound);
    tensorflow::TerminateRequest request;
    request.set_session_id(session_id);
    tensorflow::TerminateResponse response;
    return stub->Terminate(&context, request, &response);
  }

  // Runs Profile on another thread.
  std::future<std::pair<grpc::Status, ProfileResponse>> ProfileAsync(
      const ProfileRequest& request) {
    return std::async(std::launch::async, [this, request] {
      ProfileResponse response;
      grpc::Status status = Profile(request, &response);
      return std::make_pair(status, response);
    });
  }

  std::unique_ptr<ProfilerServer> server;
  std::unique_ptr<ProfilerService::Stub> stub;
};

ProfileRequest XSpaceRequest(const std::string& session, uint64_t duration_ms) {
  ProfileRequest request;
  request.set_duration_ms(duration_ms);
  request.mutable_opts()->set_duration_ms(duration_ms);
  request.set_session_id(session);
  request.set_host_name("testhost");
  request.set_emit_xspace(true);
  return request;
}

// Ends the running capture `session` with Terminate and waits for `call`.
template <typename Future>
bool TerminateUntilDone(TestServer& server, const std::string& session, Future& call) {
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (call.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    if (!server.Terminate(session).ok()) return false;
  }
  return true;
}

void RecordMarkersOnThread() {
  std::thread worker([] {
    SetCurrentThreadName("rpc_worker");
    for (int step = 0; step < 3; ++step) {
      StepTrace step_trace("train", step);
      ScopedTrace inner("remote_marker");
    }
  });
  worker.join();
}

TEST_CASE("Profile with emit_xspace returns the markers of the window") {
  TempDir dir;
  TestServer server(dir.path());
  auto call = server.ProfileAsync(XSpaceRequest("emit", 60000));
  REQUIRE(WaitFor(CaptureRunning));
  RecordMarkersOnThread();
  REQUIRE(TerminateUntilDone(server, "emit", call));
  auto [status, response] = call.get();
  REQUIRE(status.ok());
  CHECK_FALSE(response.empty_trace());
  CHECK(HasEvent(response.xspace(), "remote_marker"));
  CHECK(HasEvent(response.xspace(), "train"));
  REQUIRE(response.xspace().hostnames_size() == 1);
  CHECK(response.xspace().hostnames(0) == "testhost");
  // Nothing was written on the server.
  CHECK_FALSE(Exists(dir.path() + "/emit"));
}

TEST_CASE("a returned profile is serialized in one pass, to the size the server announced") {
  TempDir dir;
  TestServer server(dir.path());
  const int one_pass_before = rpc::OnePassResponsesForTesting();
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kBound * 3);
  ProfileResponse response;
  bool recorded = false;  // Checked here: Catch2 is not thread-safe.
  std::thread worker([&recorded] {
    recorded = WaitFor(CaptureRunning);
    if (recorded) RecordMarkersOnThread();
  });
  const grpc::Status status = server.stub->Profile(&context, XSpaceRequest("once", 300), &response);
  worker.join();
  REQUIRE(recorded);
  REQUIRE(status.ok());
  // What gRPC sent is the message the handler built and sized (its
  // cached sizes written once into gRPC's slices), not a second serialization.
  CHECK(rpc::OnePassResponsesForTesting() == one_pass_before + 1);
  CHECK(HasEvent(response.xspace(), "remote_marker"));
  const auto& headers = context.GetServerInitialMetadata();
  auto announced = headers.find(rpc::kResponseBytesHeader);
  REQUIRE(announced != headers.end());
  CHECK(std::string(announced->second.data(), announced->second.size()) ==
        std::to_string(response.ByteSizeLong()));
}

TEST_CASE("Profile without emit_xspace saves <root>/<session>/<host>.xplane.pb") {
  TempDir dir;
  ProfilerServerOptions options;
  options.write_chrome_trace = true;
  TestServer server(dir.path(), options);
  const std::string root = dir.path() + "/plugins/profile";
  ProfileRequest request = XSpaceRequest("2026_11_22_14_05_33", 60000);
  request.set_emit_xspace(false);
  request.set_repository_root(root);
  auto call = server.ProfileAsync(request);
  REQUIRE(WaitFor(CaptureRunning));
  RecordMarkersOnThread();
  REQUIRE(TerminateUntilDone(server, "2026_11_22_14_05_33", call));
  auto [status, response] = call.get();
  REQUIRE(status.ok());
  CHECK_FALSE(response.empty_trace());
  CHECK(response.xspace().planes_size() == 0);
  const std::string file = root + "/2026_11_22_14_05_33/testhost.xplane.pb";
  REQUIRE(Exists(file));
  XSpace saved = testing::ReadXSpace(file);
  CHECK(HasEvent(saved, "remote_marker"));
  // With both traces asked for: the Chrome trace beside it, the Kineto
  // trace in <logdir>/<run>/ (logdir = the repository_root above
  // plugins/profile), each the export of that XSpace.
  const std::pair<std::string, std::string> traces[] = {
      {root + "/2026_11_22_14_05_33/testhost.trace.json.gz", testing::ChromeTraceText(saved)},
      {dir.path() + "/2026_11_22_14_05_33/testhost.pt.trace.json.gz",
       testing::KinetoTraceText(saved)}};
  for (const auto& [path, text] : traces) {
    INFO(path);
    auto data = exporter::ReadFile(path);
    REQUIRE(data.ok());
    auto json = exporter::GzipDecompress(*data);
    REQUIRE(json.ok());
    CHECK(*json == text);
  }
}

TEST_CASE("a saved profile's traces: the Kineto one by default, Chrome only where no Kineto is") {
  TempDir dir;
  // Saves session `session` below `root` (relative to dir) with `options`.
  auto save = [&](const ProfilerServerOptions& options, const std::string& session,
                  const std::string& root) {
    TestServer server(dir.path(), options);
    ProfileRequest request = XSpaceRequest(session, 20);
    request.set_emit_xspace(false);
    request.set_repository_root(dir.path() + "/" + root);
    ProfileResponse response;
    return server.Profile(request, &response).ok();
  };
  // By default the dialog's capture is written as JSON once: the Kineto
  // trace, which the PyTorch plugin, HTA and Perfetto all open.
  REQUIRE(save({}, "default", "plugins/profile"));
  CHECK(testing::ListDir(dir.path() + "/plugins/profile/default") ==
        std::vector<std::string>{"testhost.xplane.pb"});
  CHECK(testing::ListDir(dir.path() + "/default") ==
        std::vector<std::string>{"testhost.pt.trace.json.gz"});
  ProfilerServerOptions off;
  off.write_chrome_trace = false;
  off.write_pytorch_trace = false;
  REQUIRE(save(off, "off", "plugins/profile"));
  CHECK(testing::ListDir(dir.path() + "/plugins/profile/off") ==
        std::vector<std::string>{"testhost.xplane.pb"});
  CHECK_FALSE(Exists(dir.path() + "/off"));
  // Outside plugins/profile no Kineto trace is written: the Chrome trace is.
  REQUIRE(save({}, "elsewhere", "profiles"));
  CHECK(testing::ListDir(dir.path() + "/profiles/elsewhere") ==
        std::vector<std::string>{"testhost.trace.json.gz", "testhost.xplane.pb"});
  CHECK_FALSE(Exists(dir.path() + "/elsewhere"));
}

TEST_CASE("a short window ends by itself, override_hostname names the file") {
  TempDir dir;
  TestServer server(dir.path());
  ProfileRequest request = XSpaceRequest("short", 20);
  request.set_emit_xspace(false);
  request.set_repository_root(dir.path());
  request.mutable_opts()->set_override_hostname("otherhost");
  ProfileResponse response;
  REQUIRE(server.Profile(request, &response).ok());
  CHECK(Exists(dir.path() + "/short/otherhost.xplane.pb"));
}

// The "profile_start_time" stat of the Task Environment plane, 0 if none.
uint64_t ProfileStartTime(const XSpace& space) {
  return static_cast<uint64_t>(xplane::ProfileStartEpochNs(space));
}

uint64_t EpochNanosNow() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::system_clock::now().time_since_epoch())
                                   .count());
}

TEST_CASE("start_timestamp_ns in the future delays the window to that instant") {
  TempDir dir;
  TestServer server(dir.path());
  ProfileRequest request = XSpaceRequest("later", 20);
  const uint64_t start_ns = EpochNanosNow() + 300 * 1000000ull;
  request.mutable_opts()->set_start_timestamp_ns(start_ns);
  ProfileResponse response;
  REQUIRE(server.Profile(request, &response).ok());
  const uint64_t window_start = ProfileStartTime(response.xspace());
  REQUIRE(window_start != 0);
  CHECK(window_start >= start_ns);
  CHECK(EpochNanosNow() >= start_ns + 20 * 1000000ull);

  ProfileRequest too_far = XSpaceRequest("far", 20);
  too_far.mutable_opts()->set_start_timestamp_ns(EpochNanosNow() +
                                                 uint64_t{2} * 3600 * 1000000000ull);
  grpc::Status status = server.Profile(too_far, &response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(Contains(status.error_message(), "start_timestamp_ns"));

  // A start in the past means now.
  ProfileRequest past = XSpaceRequest("past", 20);
  past.mutable_opts()->set_start_timestamp_ns(1);
  CHECK(server.Profile(past, &response).ok());
}

TEST_CASE("a host_name holding the dialled address names the file as TSL does") {
  TempDir dir;
  TestServer server(dir.path());
  ProfileRequest request = XSpaceRequest("dialled", 20);
  request.set_emit_xspace(false);
  request.set_repository_root(dir.path());
  request.set_host_name("localhost:9012");  // What xprof's capture client sends.
  ProfileResponse response;
  REQUIRE(server.Profile(request, &response).ok());
  CHECK(Exists(dir.path() + "/dialled/localhost_9012.xplane.pb"));
}

TEST_CASE("bad requests are refused with the field named") {
  TempDir dir;
  TestServer server(dir.path());
  ProfileResponse response;

  ProfileRequest zero = XSpaceRequest("zero", 0);
  grpc::Status status = server.Profile(zero, &response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(Contains(status.error_message(), "duration_ms"));

  ProfileRequest too_long = XSpaceRequest("long", 2 * 3600 * 1000);
  status = server.Profile(too_long, &response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);

  ProfileRequest escape = XSpaceRequest("../x", 10);
  escape.set_emit_xspace(false);
  escape.set_repository_root(dir.path());
  status = server.Profile(escape, &response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(Contains(status.error_message(), "session_id"));

  ProfileRequest bad_host = XSpaceRequest("ok", 10);
  bad_host.set_host_name("a/b");
  status = server.Profile(bad_host, &response);
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(Contains(status.error_message(), "host_name"));

  CHECK_FALSE(Exists(dir.path() + "/x"));
  CHECK(rpc::RunningCapturesForTesting() == 0);
}

TEST_CASE("tracer levels out of range are refused before the window opens") {
  TempDir dir;
  TestServer server(dir.path());
  struct Case {
    const char* field;
    const char* range;
    uint32_t host_level;
    uint32_t device_level;
  };
  // 2^32 - 1 would be -1 as an int: "off" instead of an error.
  for (const Case& c : {Case{"opts.host_tracer_level", "0..3", 4, 1},
                        Case{"opts.host_tracer_level", "0..3", UINT32_MAX, 1},
                        Case{"opts.device_tracer_level", "0..2", 2, 3},
                        Case{"opts.device_tracer_level", "0..2", 2, UINT32_MAX}}) {
    CAPTURE(c.host_level, c.device_level);
    ProfileRequest request = XSpaceRequest("levels", 10);
    request.mutable_opts()->set_version(1);
    request.mutable_opts()->set_host_tracer_level(c.host_level);
    request.mutable_opts()->set_device_tracer_level(c.device_level);
    ProfileResponse response;
    grpc::Status status = server.Profile(request, &response);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(Contains(status.error_message(), c.field));
    CHECK(Contains(status.error_message(), c.range));
    CHECK_FALSE(response.has_xspace());
  }
  // The edges of the ranges are accepted.
  ProfileRequest edges = XSpaceRequest("edges", 10);
  edges.mutable_opts()->set_version(1);
  edges.mutable_opts()->set_host_tracer_level(3);
  edges.mutable_opts()->set_device_tracer_level(2);
  ProfileResponse response;
  CHECK(server.Profile(edges, &response).ok());
}

TEST_CASE("repository_root outside allowed_root is refused") {
  TempDir allowed;
  TempDir outside;
  TestServer server(allowed.path());
  ProfileResponse response;
  for (const std::string& root :
       {outside.path(),
        allowed.path() + "/../" + outside.path().substr(outside.path().rfind('/') + 1),
        allowed.path() + "/new/../../escape", std::string("/")}) {
    CAPTURE(root);
    ProfileRequest request = XSpaceRequest("run", 10);
    request.set_emit_xspace(false);
    request.set_repository_root(root);
    grpc::Status status = server.Profile(request, &response);
    CHECK(status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK(Contains(status.error_message(), "ProfilerServerOptions::allowed_root"));
  }
  // A symlink inside the allowed root that leads out is refused too.
  const std::string link = allowed.path() + "/link";
  REQUIRE(symlink(outside.path().c_str(), link.c_str()) == 0);
  ProfileRequest request = XSpaceRequest("run", 10);
  request.set_emit_xspace(false);
  request.set_repository_root(link + "/plugins/profile");
  grpc::Status status = server.Profile(request, &response);
  CHECK(status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
  CHECK_FALSE(Exists(outside.path() + "/plugins"));
  CHECK_FALSE(Exists(outside.path() + "/run"));
}

TEST_CASE("a second concurrent Profile is refused while the first succeeds") {
  TempDir dir;
  TestServer server(dir.path());
  auto first = server.ProfileAsync(XSpaceRequest("first", 60000));
  REQUIRE(WaitFor(CaptureRunning));
  ProfileResponse response;
  grpc::Status second = server.Profile(XSpaceRequest("second", 10), &response);
  CHECK(second.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(Contains(second.error_message(),
                 "already running in this process: a remote capture (session 'first')"));
  // Terminate with another session id does not end the first.
  REQUIRE(server.Terminate("second").ok());
  CHECK(first.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
  REQUIRE(TerminateUntilDone(server, "first", first));
  auto [status, unused] = first.get();
  CHECK(status.ok());
}

TEST_CASE("Terminate ends a long Profile early and keeps its data") {
  TempDir dir;
  TestServer server(dir.path());
  const auto start = std::chrono::steady_clock::now();
  auto call = server.ProfileAsync(XSpaceRequest("long", 3600 * 1000));
  REQUIRE(WaitFor(CaptureRunning));
  RecordMarkersOnThread();
  REQUIRE(TerminateUntilDone(server, "long", call));
  auto [status, response] = call.get();
  REQUIRE(status.ok());
  CHECK(HasEvent(response.xspace(), "remote_marker"));
  CHECK(std::chrono::steady_clock::now() - start < kBound);
}

TEST_CASE("a client that gives up does not leave the server stuck") {
  TempDir dir;
  TestServer server(dir.path());
  {
    // Cancelled while the capture runs: the server ends it with CANCELLED.
    grpc::ClientContext context;
    auto call = std::async(std::launch::async, [&] {
      ProfileResponse response;
      return server.stub->Profile(&context, XSpaceRequest("cancelled", 60000), &response);
    });
    REQUIRE(WaitFor(CaptureRunning));
    context.TryCancel();
    REQUIRE(call.wait_for(kBound) == std::future_status::ready);
    CHECK(call.get().error_code() == grpc::StatusCode::CANCELLED);
    REQUIRE(WaitFor([] { return !CaptureRunning(); }));
  }
  {
    // A client deadline shorter than the window.
    ProfileResponse response;
    grpc::Status status = server.Profile(XSpaceRequest("abandoned", 60000), &response,
                                         std::chrono::milliseconds(300));
    CHECK(status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED);
    REQUIRE(WaitFor([] { return !CaptureRunning(); }));
  }
  // The next capture runs normally.
  auto call = server.ProfileAsync(XSpaceRequest("next", 60000));
  REQUIRE(WaitFor(CaptureRunning));
  RecordMarkersOnThread();
  REQUIRE(TerminateUntilDone(server, "next", call));
  auto [status, response] = call.get();
  CHECK(status.ok());
  CHECK(HasEvent(response.xspace(), "remote_marker"));
  // A local Profiler can capture again too.
  ProfilerOptions options;
  options.port = 0;
  options.logdir = dir.path();
  Profiler profiler(options);
  CHECK(profiler.status().ok());
}

TEST_CASE("Profilers and remote captures share one gate and one message naming what runs") {
  TempDir dir;
  TestServer server(dir.path());
  ProfilerOptions options;
  options.port = 0;
  options.logdir = dir.path();
  options.ms_duration = 60000;
  {
    auto remote = server.ProfileAsync(XSpaceRequest("first", 60000));
    REQUIRE(WaitFor(CaptureRunning));
    Profiler local(options);
    CHECK(absl::IsFailedPrecondition(local.status()));
    const std::string message(local.status().message());
    CHECK(Contains(message,
                   "a capture is already running in this process: a remote capture "
                   "(session 'first') through the profiler server; it ends when its "
                   "duration_ms has passed or its client cancels it, started "));
    CHECK(Contains(message,
                   "Only one capture runs at a time: start this one after that "
                   "one has ended"));
    REQUIRE(TerminateUntilDone(server, "first", remote));
    CHECK(remote.get().first.ok());
  }
  Profiler local(options);
  REQUIRE(local.status().ok());
  ProfileResponse response;
  grpc::Status refused = server.Profile(XSpaceRequest("second", 10), &response);
  CHECK(refused.error_code() == grpc::StatusCode::FAILED_PRECONDITION);
  CHECK(Contains(refused.error_message(),
                 "a capture is already running in this process: a Profiler (its 60000 ms "
                 "window ends by itself, or at Profiler::Stop()), started "));
  CHECK(Contains(refused.error_message(), "start this one after that one has ended"));
  REQUIRE(local.Stop().ok());
}

TEST_CASE(
    "Monitor with duration_ms 0 answers the server's clock, other Monitors are unimplemented") {
  TempDir dir;
  TestServer server(dir.path());
  {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kBound);
    tensorflow::MonitorRequest request;
    tensorflow::MonitorResponse response;
    const int64_t before = core::EpochNowNs();
    REQUIRE(server.stub->Monitor(&context, request, &response).ok());
    const int64_t after = core::EpochNowNs();
    const auto& headers = context.GetServerInitialMetadata();
    auto it = headers.find(rpc::kServerClockHeader);
    REQUIRE(it != headers.end());
    int64_t server_ns = 0;
    REQUIRE(absl::SimpleAtoi(absl::string_view(it->second.data(), it->second.size()), &server_ns));
    // The same clock, read while answering.
    CHECK(server_ns >= before);
    CHECK(server_ns <= after);
    CHECK(Contains(response.data(), std::to_string(server_ns)));
  }
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kBound);
  tensorflow::MonitorRequest request;
  request.set_duration_ms(1000);
  tensorflow::MonitorResponse response;
  CHECK(server.stub->Monitor(&context, request, &response).error_code() ==
        grpc::StatusCode::UNIMPLEMENTED);
}

TEST_CASE("a port in use is an error naming the port, port 0 picks one") {
  TempDir dir;
  ProfilerServerOptions options;
  options.port = 0;
  options.allowed_root = dir.path();
  auto first = ProfilerServer::Start(options);
  REQUIRE(first.ok());
  const int port = (*first)->port();
  CHECK(port > 0);
  options.port = port;
  auto second = ProfilerServer::Start(options);
  REQUIRE_FALSE(second.ok());
  CHECK(Contains(std::string(second.status().message()), std::to_string(port)));

  // A port held by a plain socket.
  int fd = ListenOnFreeLoopbackPort(&options.port);
  auto third = ProfilerServer::Start(options);
  close(fd);
  REQUIRE_FALSE(third.ok());
  CHECK(Contains(std::string(third.status().message()), std::to_string(options.port)));

  (*first)->Shutdown();
  (*first)->Shutdown();  // Twice is fine.
  options.port = -1;
  CHECK(absl::IsInvalidArgument(ProfilerServer::Start(options).status()));
}

TEST_CASE("Shutdown ends a running capture") {
  TempDir dir;
  TestServer server(dir.path());
  auto call = server.ProfileAsync(XSpaceRequest("during_shutdown", 3600 * 1000));
  REQUIRE(WaitFor(CaptureRunning));
  server.server->Shutdown();
  REQUIRE(call.wait_for(kBound) == std::future_status::ready);
  CHECK_FALSE(CaptureRunning());
}

TEST_CASE("ProfilerOptions::port serves remote captures after the window") {
  TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  close(ListenOnFreeLoopbackPort(&options.port));  // A port free just now.
  {
    Profiler profiler(options);
    REQUIRE(profiler.status().ok());
    auto result = profiler.Stop();
    REQUIRE(result.ok());
    CHECK(result->server_port == options.port);
    CHECK(result->warnings.empty());
  }
  // The server outlives the Profiler; a second Profiler reuses it.
  Profiler again(options);
  auto again_result = again.Stop();
  REQUIRE(again_result.ok());
  CHECK(again_result->server_port == options.port);

  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(options.port),
                                     grpc::InsecureChannelCredentials());
  auto stub = ProfilerService::NewStub(channel);
  ProfileRequest request = XSpaceRequest("remote", 20);
  request.set_emit_xspace(false);
  request.set_repository_root(dir.path() + "/plugins/profile");
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kBound);
  ProfileResponse response;
  REQUIRE(stub->Profile(&context, request, &response).ok());
  CHECK(Exists(dir.path() + "/plugins/profile/remote/testhost.xplane.pb"));
  // The Kineto trace in the PyTorch plugin's run folder, and no Chrome
  // trace beside the xplane.pb: Perfetto opens the Kineto one.
  CHECK(testing::ListDir(dir.path() + "/plugins/profile/remote") ==
        std::vector<std::string>{"testhost.xplane.pb"});
  CHECK(Exists(dir.path() + "/remote/testhost.pt.trace.json.gz"));
}

TEST_CASE("ProfilerOptions::port held by another program: captured, with a warning") {
  TempDir dir;
  ProfilerOptions options;
  options.logdir = dir.path();
  const int fd = ListenOnFreeLoopbackPort(&options.port);
  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  { ScopedTrace marker("kept"); }
  auto result = profiler.Stop();
  close(fd);
  REQUIRE(result.ok());
  CHECK(result->server_port == 0);
  CHECK(result->events > 0);
  REQUIRE(result->warnings.size() == 1);
  CHECK(Contains(result->warnings[0], std::to_string(options.port)));
  CHECK(Contains(result->warnings[0], "ProfilerOptions::port"));
}

// ---- Hostile clients: links swapped in during the window, huge fields,
// unparsable requests, a full disk.

std::string RealPath(const std::string& path) {
  char resolved[PATH_MAX];
  REQUIRE(realpath(path.c_str(), resolved) != nullptr);
  return resolved;
}

// Number of entries below `path`, recursively (links not followed).
int CountEntries(const std::string& path) {
  int count = 0;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name == "." || name == "..") continue;
      ++count;
      if (entry->d_type == DT_DIR) count += CountEntries(path + "/" + name);
    }
    closedir(dir);
  }
  return count;
}

TEST_CASE("a client that turns folders into links during its window writes nothing outside") {
  TempDir allowed_dir;
  TempDir outside;
  const std::string allowed = RealPath(allowed_dir.path());
  TestServer server(allowed);
  struct Attack {
    const char* what;
    std::string repository_root;  // As requested: a real folder or none yet.
    std::string link;             // Made a link to `outside` during the window.
    std::function<void()> before;
  };
  const std::vector<Attack> attacks = {
      {"repository_root swapped for a link", allowed + "/sub", allowed + "/sub",
       [&] { REQUIRE(mkdir((allowed + "/sub").c_str(), 0755) == 0); }},
      {"a missing folder created as a link", allowed + "/new/plugins/profile", allowed + "/new",
       [] {}},
      {"the session folder planted as a link", allowed + "/sub2", allowed + "/sub2/run",
       [&] { REQUIRE(mkdir((allowed + "/sub2").c_str(), 0755) == 0); }},
  };
  for (const Attack& attack : attacks) {
    CAPTURE(attack.what);
    attack.before();
    ProfileRequest request = XSpaceRequest("run", 60000);
    request.set_emit_xspace(false);
    request.set_repository_root(attack.repository_root);
    auto call = server.ProfileAsync(request);
    REQUIRE(WaitFor(CaptureRunning));
    // The window is open: validation is long past.
    if (Exists(attack.link)) {
      REQUIRE(rename(attack.link.c_str(), (attack.link + ".moved").c_str()) == 0);
    }
    REQUIRE(symlink(outside.path().c_str(), attack.link.c_str()) == 0);
    REQUIRE(TerminateUntilDone(server, "run", call));
    auto [status, response] = call.get();
    CHECK(status.error_code() == grpc::StatusCode::PERMISSION_DENIED);
    CHECK(Contains(status.error_message(), "'" + attack.link + "' is a symbolic link"));
    CHECK(CountEntries(outside.path()) == 0);
  }
}

TEST_CASE("20 KB fields are cut in the error, so the client gets the server's message") {
  TempDir dir;
  TestServer server(dir.path());
  // Past gRPC's 8 KiB metadata limit, within the 64 KiB receive limit.
  const std::string huge(20000, 'a');
  struct Case {
    const char* field;
    grpc::StatusCode code;
    std::function<void(ProfileRequest*)> apply;
  };
  const std::vector<Case> cases = {
      {"session_id", grpc::StatusCode::INVALID_ARGUMENT,
       [&](ProfileRequest* r) { r->set_session_id(huge + "/"); }},
      {"host_name", grpc::StatusCode::INVALID_ARGUMENT,
       [&](ProfileRequest* r) { r->set_host_name(huge); }},
      {"opts.override_hostname", grpc::StatusCode::INVALID_ARGUMENT,
       [&](ProfileRequest* r) { r->mutable_opts()->set_override_hostname(huge + "/"); }},
      {"repository_root", grpc::StatusCode::INVALID_ARGUMENT,
       [&](ProfileRequest* r) {
         r->set_emit_xspace(false);
         r->set_repository_root("/" + huge);
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    ProfileRequest request = XSpaceRequest("run", 10);
    c.apply(&request);
    ProfileResponse response;
    grpc::Status status = server.Profile(request, &response);
    CHECK(status.error_code() == c.code);
    CHECK(Contains(status.error_message(), c.field));
    CHECK(Contains(status.error_message(), "bytes)"));
    CHECK(status.error_message().size() < 1000);
  }
  CHECK(CountEntries(dir.path()) == 0);
}

TEST_CASE("names past the file system's NAME_MAX are refused before the window opens") {
  TempDir dir;
  TestServer server(dir.path());
  const std::string root = dir.path() + "/plugins/profile";
  struct Case {
    const char* field;
    std::function<void(ProfileRequest*)> apply;
  };
  // Every file it saves must fit 255 bytes, the longest being
  // <host>.pt.trace.json.gz (17 bytes of suffix): 239 + 17 does not.
  const std::vector<Case> cases = {
      {"host_name", [](ProfileRequest* r) { r->set_host_name(std::string(239, 'h')); }},
      {"opts.override_hostname",
       [](ProfileRequest* r) { r->mutable_opts()->set_override_hostname(std::string(250, 'h')); }},
      {"session_id", [](ProfileRequest* r) { r->set_session_id(std::string(256, 's')); }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.field);
    // A window of an hour: only a refusal before it returns at once.
    ProfileRequest request = XSpaceRequest("run", 3600 * 1000);
    request.set_emit_xspace(false);
    request.set_repository_root(root);
    c.apply(&request);
    ProfileResponse response;
    grpc::Status status = server.Profile(request, &response, kBound);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(Contains(status.error_message(), c.field));
    CHECK(Contains(status.error_message(), "NAME_MAX"));
  }
  CHECK_FALSE(Exists(root));
  // The longest that fits is saved.
  const std::string host(238, 'h');
  ProfileRequest request = XSpaceRequest("run", 10);
  request.set_emit_xspace(false);
  request.set_repository_root(root);
  request.set_host_name(host);
  ProfileResponse response;
  grpc::Status status = server.Profile(request, &response);
  CHECK(status.ok());
  CHECK(Exists(root + "/run/" + host + ".xplane.pb"));
}

TEST_CASE("a request that cannot be parsed is INVALID_ARGUMENT naming the fields") {
  TempDir dir;
  TestServer server(dir.path());
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server.server->port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  // session_id (field 6) holding bytes that are not UTF-8; duration_ms 10.
  const std::string raw("\x08\x0a\x32\x02\xff\xfe", 6);
  grpc::Slice slice(raw);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kBound);
  std::promise<grpc::Status> done;
  stub.UnaryCall(&context, "/tensorflow.ProfilerService/Profile", grpc::StubOptions(), &request,
                 &response, [&](grpc::Status s) { done.set_value(s); });
  grpc::Status status = done.get_future().get();
  CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
  CHECK(Contains(status.error_message(), "session_id"));
  CHECK(Contains(status.error_message(), "UTF-8"));
  CHECK(Contains(status.error_message(), "/tensorflow.ProfilerService/Profile"));
}

TEST_CASE("a full disk mid-save leaves no folder or partial file and names path and errno") {
  TempDir dir;
  TestServer server(dir.path());
  const std::string allowed = RealPath(dir.path());
  ProfileRequest request = XSpaceRequest("run", 60000);
  request.set_emit_xspace(false);
  request.set_repository_root(allowed + "/plugins/profile");
  auto call = server.ProfileAsync(request);
  REQUIRE(WaitFor(CaptureRunning));
  RecordMarkersOnThread();
  grpc::Status status;
  {
    testing::ScopedFileSizeLimit full_disk(16);
    REQUIRE(TerminateUntilDone(server, "run", call));
    status = call.get().first;
  }
  CHECK(status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(Contains(status.error_message(), allowed + "/plugins/profile/run/testhost.xplane.pb"));
  CHECK(Contains(status.error_message(), "File too large"));
  CHECK(CountEntries(allowed) == 0);
}

TEST_CASE("the drop warning of a remote capture names settings a remote user can change") {
  TempDir dir;
  ProfilerServerOptions options;
  options.port = 0;
  options.allowed_root = dir.path();
  options.max_buffer_bytes = 1;
  auto refused = ProfilerServer::Start(options);
  REQUIRE_FALSE(refused.ok());
  CHECK(Contains(std::string(refused.status().message()), "max_buffer_bytes"));

  options.max_buffer_bytes = 64 * 1024;  // One block.
  auto started = ProfilerServer::Start(options);
  REQUIRE(started.ok());
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string((*started)->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = ProfilerService::NewStub(channel);
  auto call = std::async(std::launch::async, [&] {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kBound * 3);
    ProfileResponse response;
    grpc::Status status = stub->Profile(&context, XSpaceRequest("drops", 60000), &response);
    return std::make_pair(status, response);
  });
  REQUIRE(WaitFor(CaptureRunning));
  for (int i = 0; i < 5000; ++i) ScopedTrace t("many");
  const auto deadline = std::chrono::steady_clock::now() + kBound;
  while (call.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    grpc::ClientContext context;
    tensorflow::TerminateRequest terminate;
    terminate.set_session_id("drops");
    tensorflow::TerminateResponse unused;
    REQUIRE(stub->Terminate(&context, terminate, &unused).ok());
  }
  auto [status, response] = call.get();
  REQUIRE(status.ok());
  std::string warnings;
  for (const std::string& warning : response.xspace().warnings()) warnings += warning;
  CAPTURE(warnings);
  CHECK(Contains(warnings, "dropped"));
  CHECK(Contains(warnings, "ProfilerServerOptions::max_buffer_bytes"));
  CHECK(Contains(warnings, "duration_ms"));
  CHECK_FALSE(Contains(warnings, "ms_duration"));
}

// ---- What held in the attack, kept.

// True if a TCP connection to address:port is accepted.
bool Connects(const char* address, int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(port));
  REQUIRE(inet_pton(AF_INET, address, &target.sin_addr) == 1);
  const bool connected = connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0;
  close(fd);
  return connected;
}

TEST_CASE("the server listens on 127.0.0.1 only unless bind_all_interfaces is set") {
  TempDir dir;
  ProfilerServerOptions options;
  options.port = 0;
  options.allowed_root = dir.path();
  // 127.0.0.2 is this machine too, but not the address a loopback-only
  // server is bound to; a server on every interface takes it.
  for (const bool all : {false, true}) {
    CAPTURE(all);
    options.bind_all_interfaces = all;
    auto server = ProfilerServer::Start(options);
    REQUIRE(server.ok());
    CHECK(Connects("127.0.0.1", (*server)->port()));
    CHECK(Connects("127.0.0.2", (*server)->port()) == all);
  }
}

TEST_CASE("200 concurrent Profile calls: one captures, the others are refused") {
  TempDir dir;
  TestServer server(dir.path());
  constexpr int kCalls = 200;
  std::vector<std::future<std::pair<grpc::Status, ProfileResponse>>> calls;
  for (int i = 0; i < kCalls; ++i)
    calls.push_back(server.ProfileAsync(XSpaceRequest("same", 60000)));
  // Every call but the one holding the window comes back refused.
  int refused = 0;
  std::vector<bool> done(kCalls, false);
  const auto deadline = std::chrono::steady_clock::now() + kBound * 3;
  while (refused < kCalls - 1) {
    REQUIRE(std::chrono::steady_clock::now() < deadline);
    for (int i = 0; i < kCalls; ++i) {
      if (done[i] || calls[i].wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
        continue;
      }
      done[i] = true;
      auto [status, unused] = calls[i].get();
      // The capture gate refuses them, or, past kMaxProfileCalls calls at
      // once, the call limit before they reach it.
      CHECK((status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
             status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED));
      ++refused;
    }
  }
  // The refusals mean the winner holds the gate; its window opens right
  // after (it may still be starting its collectors).
  REQUIRE(WaitFor(CaptureRunning));
  int ok = 0;
  for (int i = 0; i < kCalls; ++i) {
    if (done[i]) continue;
    REQUIRE(TerminateUntilDone(server, "same", calls[i]));
    ok += calls[i].get().first.ok() ? 1 : 0;
  }
  CHECK(ok == 1);
}

TEST_CASE("a thousand dropped connections leave the server serving") {
  TempDir dir;
  TestServer server(dir.path());
  const int port = server.server->port();
  for (int i = 0; i < 1000; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in target{};
    target.sin_family = AF_INET;
    target.sin_port = htons(static_cast<uint16_t>(port));
    target.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&target), sizeof(target)) == 0);
    // Half an HTTP/2 preface on every other one, then gone.
    if (i % 2 == 1) REQUIRE(write(fd, "PRI * HTTP/2.0\r\n", 16) == 16);
    close(fd);
  }
  ProfileResponse response;
  grpc::Status status = server.Profile(XSpaceRequest("after", 10), &response);
  CHECK(status.ok());
  CHECK(rpc::RunningCapturesForTesting() == 0);
}

TEST_CASE("a rank's Profiler serves on port + local_rank") {
  TempDir dir;
  const int base = testing::FreeLoopbackPortRange(2);
  ProfilerOptions options;
  options.logdir = dir.path();
  options.host_name = "testhost";
  options.ms_duration = 60000;
  options.port = base;
  options.rank = 1;
  options.local_rank = 1;
  options.world_size = 2;
  Profiler profiler(options);
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(result->server_port == base + 1);
  CHECK(result->warnings.empty());
}

TEST_CASE("a rank whose port + local_rank is taken is named with the port in the warning") {
  TempDir dir;
  const int base = testing::FreeLoopbackPortRange(3);
  // Another program holds the port of local rank 2.
  const int taken = base + 2;
  const int fd = testing::ListenOnLoopbackPort(taken);
  ProfilerOptions options;
  options.logdir = dir.path();
  options.host_name = "testhost";
  options.ms_duration = 60000;
  options.port = base;
  options.rank = 5;
  options.local_rank = 2;
  options.world_size = 8;
  Profiler profiler(options);
  auto result = profiler.Stop();
  close(fd);
  REQUIRE(result.ok());  // The profile is still written.
  CHECK(result->server_port == 0);
  REQUIRE(result->warnings.size() == 1);
  CAPTURE(result->warnings[0]);
  CHECK(Contains(result->warnings[0], "rank 5 (local_rank 2)"));
  CHECK(Contains(result->warnings[0], "port " + std::to_string(taken)));
}

// An earlier profile of `host` in run `session` below `root`, as the
// program's own Profiler or another client left it.
std::string PlantProfile(const std::string& root, const std::string& session,
                         const std::string& host, const std::string& content) {
  REQUIRE(exporter::MakeDirectories(root + "/" + session).ok());
  const std::string file = root + "/" + session + "/" + host + ".xplane.pb";
  REQUIRE(exporter::WriteFileAtomically(file, content).ok());
  return file;
}

TEST_CASE("a remote save never replaces an existing profile: refused before the window") {
  TempDir dir;
  TestServer server(dir.path());
  const std::string root = RealPath(dir.path()) + "/plugins/profile";
  const std::string file = PlantProfile(root, "run", "testhost", "earlier capture");
  // An hour's window: only a refusal before it opens returns in time.
  ProfileRequest request = XSpaceRequest("run", 3600 * 1000);
  request.set_emit_xspace(false);
  request.set_repository_root(root);
  ProfileResponse response;
  grpc::Status status = server.Profile(request, &response, kBound);
  CHECK(status.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(Contains(status.error_message(), "'" + file + "' already exists"));
  CHECK(Contains(status.error_message(), "another session_id"));
  CHECK(*exporter::ReadFile(file) == "earlier capture");
  // Another host of the same run (a multi-host capture) is saved beside it.
  ProfileRequest other = XSpaceRequest("run", 10);
  other.set_emit_xspace(false);
  other.set_repository_root(root);
  other.set_host_name("otherhost");
  CHECK(server.Profile(other, &response).ok());
  CHECK(testing::ListDir(root + "/run") ==
        std::vector<std::string>{"otherhost.xplane.pb", "testhost.xplane.pb"});
}

TEST_CASE("a profile that appears during the window is not replaced by the save") {
  TempDir dir;
  TestServer server(dir.path());
  const std::string root = RealPath(dir.path()) + "/plugins/profile";
  ProfileRequest request = XSpaceRequest("run", 60000);
  request.set_emit_xspace(false);
  request.set_repository_root(root);
  auto call = server.ProfileAsync(request);
  REQUIRE(WaitFor(CaptureRunning));
  const std::string file = PlantProfile(root, "run", "testhost", "written meanwhile");
  REQUIRE(TerminateUntilDone(server, "run", call));
  auto [status, unused] = call.get();
  CHECK(status.error_code() == grpc::StatusCode::ALREADY_EXISTS);
  CHECK(Contains(status.error_message(), "'" + file + "' already exists"));
  CHECK(*exporter::ReadFile(file) == "written meanwhile");
  // No temporary file stays beside it.
  CHECK(testing::ListDir(root + "/run") == std::vector<std::string>{"testhost.xplane.pb"});
}

TEST_CASE("requests past the size bounds are refused before any work") {
  TempDir dir;
  TestServer server(dir.path());
  const std::string root = RealPath(dir.path());
  ProfileResponse response;
  // Each with an hour's window: only a refusal before it returns in time.
  struct Case {
    const char* what;
    std::function<void(ProfileRequest*)> apply;
  };
  // kMaxRepositoryRootComponents + 1 components, all inside the root.
  std::string deep = root;
  while (static_cast<size_t>(std::count(deep.begin(), deep.end(), '/')) <
         rpc::kMaxRepositoryRootComponents) {
    deep += "/.";
  }
  const std::vector<Case> cases = {
      {"repository_root", [&](ProfileRequest* r) { r->set_repository_root(deep); }},
      {"repository_root",
       [&](ProfileRequest* r) {
         r->set_repository_root(root + "/" + std::string(rpc::kMaxRepositoryRootBytes, 'r'));
       }},
      {"tools",
       [](ProfileRequest* r) {
         for (int i = 0; i <= rpc::kMaxRequestEntries; ++i) r->add_tools("trace_viewer");
       }},
      {"opts.advanced_configuration",
       [](ProfileRequest* r) {
         for (int i = 0; i <= rpc::kMaxRequestEntries; ++i) {
           (*r->mutable_opts()->mutable_advanced_configuration())["key" + std::to_string(i)]
               .set_int64_value(i);
         }
       }},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    ProfileRequest request = XSpaceRequest("run", 3600 * 1000);
    request.set_emit_xspace(false);
    request.set_repository_root(root);
    c.apply(&request);
    grpc::Status status = server.Profile(request, &response, kBound);
    CHECK(status.error_code() == grpc::StatusCode::INVALID_ARGUMENT);
    CHECK(Contains(status.error_message(), c.what));
    CHECK(Contains(status.error_message(), "at most"));
  }
  // The deepest accepted root is resolved and saved to.
  deep.resize(deep.size() - 2);
  ProfileRequest request = XSpaceRequest("run", 10);
  request.set_emit_xspace(false);
  request.set_repository_root(deep);
  CHECK(server.Profile(request, &response).ok());
  CHECK(Exists(root + "/run/testhost.xplane.pb"));
}

TEST_CASE("a request over the receive limit is refused by gRPC, the server keeps serving") {
  TempDir dir;
  TestServer server(dir.path());
  // Empty tools strings: 2 bytes each on the wire, a string each parsed.
  ProfileRequest request = XSpaceRequest("huge", 10);
  while (request.ByteSizeLong() <= static_cast<size_t>(rpc::kMaxRequestBytes)) {
    request.add_tools("");
  }
  ProfileResponse response;
  grpc::Status status = server.Profile(request, &response);
  CHECK(status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(server.Profile(XSpaceRequest("after", 10), &response).ok());
}

TEST_CASE(
    "the handler called outside a server (as the fuzz target does) serves and ends its calls") {
  TempDir dir;
  rpc::ServiceOptions options;
  options.allowed_root = dir.path();
  rpc::ProfilerServiceImpl service(options);
  for (int i = 0; i < rpc::kMaxProfileCalls + 1; ++i) {
    grpc::ServerContext context;
    const ProfileRequest request = XSpaceRequest("outside", 1);
    ProfileResponse response;
    CHECK(service.Profile(&context, &request, &response).ok());
    service.call_limit().CallEnded(&context);
  }
  CHECK(rpc::ProfileCallsForTesting() == 0);
}

TEST_CASE("response_timeout_ms out of range is refused naming it") {
  TempDir dir;
  ProfilerServerOptions options;
  options.port = 0;
  options.allowed_root = dir.path();
  for (const int64_t timeout : {int64_t{0}, int64_t{-1}, INT64_MAX}) {
    CAPTURE(timeout);
    options.response_timeout_ms = timeout;
    auto refused = ProfilerServer::Start(options);
    REQUIRE_FALSE(refused.ok());
    CHECK(refused.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Contains(std::string(refused.status().message()), "response_timeout_ms must be 1.."));
  }
}

}  // namespace
}  // namespace neuronprof
