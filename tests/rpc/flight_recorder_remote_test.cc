// A FlightRecorder served through the capture server: remote clients pull
// its last seconds at once (neuronprof capture --flight_recorder), plain
// requests get their window from the ring, and a process without one says
// so. Real servers and the real client; no sleeps.
#include <grpcpp/grpcpp.h>

#include <catch2/catch.hpp>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/rpc/profile_call_limit.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/session/mapped_arena.h"
#include "src/xplane/clock_offset.h"
#include "tests/api/flight_options.h"
#include "tests/rpc/rpc_test_util.h"
#include "tests/test_util.h"
#include "tests/xplane_read.h"

namespace neuronprof {
namespace {

using tensorflow::profiler::XSpace;
using testing::Contains;
using testing::HasEvent;
using testing::kBound;
using testing::TempDir;

constexpr int kFillerEvents = 200000;

std::string Loopback(int port) { return "127.0.0.1:" + std::to_string(port); }

FlightRecorderOptions RecorderOptions(const TempDir& dir) {
  return testing::FlightOptions(dir.path() + "/dumps", "flight_host");
}

CaptureOptions PullOptions(const TempDir& dir, int port, int64_t duration_ms) {
  CaptureOptions options;
  options.service_addresses = {Loopback(port)};
  options.logdir = dir.path();
  options.duration_ms = duration_ms;
  options.run_name = "pulled";
  options.num_tracing_attempts = 1;
  return options;
}

// The one host's profile, read back with the project's reader.
XSpace HostSpace(const CaptureResult& result) {
  REQUIRE(result.hosts.size() == 1);
  REQUIRE(result.hosts[0].status.ok());
  REQUIRE(!result.hosts[0].files.empty());
  return testing::ReadXSpace(result.hosts[0].files[0]);
}

bool HasWarning(const XSpace& space, const std::string& part) {
  for (const std::string& warning : space.warnings()) {
    if (Contains(warning, part)) return true;
  }
  return false;
}

TEST_CASE("a remote client pulls the flight recorder's last seconds at once") {
  TempDir dir;
  auto server = testing::StartTestServer(dir.path());
  FlightRecorder recorder(RecorderOptions(dir));
  REQUIRE(recorder.status().ok());
  for (int step = 0; step < 3; ++step) {
    StepTrace step_trace("request", step);
    NEURONPROF_SCOPE("before_the_pull");
  }

  // An hour-long window: answered from the ring, not waited out (the test
  // would time out otherwise).
  CaptureOptions options = PullOptions(dir, server->port(), 3600 * 1000);
  options.flight_recorder_now = true;
  auto result = Capture(options);
  REQUIRE(result.ok());
  const XSpace space = HostSpace(*result);
  CHECK(HasEvent(space, "request"));
  CHECK(HasEvent(space, "before_the_pull"));
  CHECK(result->hosts[0].events == 6);
  CHECK(HasWarning(space, "served at once from this process's FlightRecorder"));
  CHECK(rpc::RunningCapturesForTesting() == 0);  // No capture window was opened.
  // The pull's times are put on the client's clock as a window's are.
  REQUIRE(result->hosts[0].clock_offset_measured);
  const auto recorded = xplane::ReadClockOffset(space);
  REQUIRE(recorded.has_value());
  CHECK(recorded->offset_ns == result->hosts[0].clock_offset_ns);
  CHECK(recorded->uncertainty_ns == result->hosts[0].clock_offset_uncertainty_ns);

  // Recording goes on, and the recorder still dumps.
  { NEURONPROF_SCOPE("after_the_pull"); }
  auto dump = recorder.Dump("after pull");
  REQUIRE(dump.ok());
  CHECK(dump->events == 7);
}

// What the ring lost reaches the remote client: its warnings and its file.
TEST_CASE("a remote pull of a ring that overwrote older events says so") {
  TempDir dir;
  auto server = testing::StartTestServer(dir.path());
  FlightRecorderOptions recorder_options = RecorderOptions(dir);
  recorder_options.ring_bytes = 4 * 64 * 1024;  // 4 blocks: 8188 records.
  FlightRecorder recorder(recorder_options);
  REQUIRE(recorder.status().ok());
  for (int i = 0; i < 40000; ++i) NEURONPROF_SCOPE("many");
  CaptureOptions options = PullOptions(dir, server->port(), 3600 * 1000);
  options.flight_recorder_now = true;
  auto result = Capture(options);
  REQUIRE(result.ok());
  const XSpace space = HostSpace(*result);
  CHECK(result->hosts[0].events < 40000);
  CHECK(HasWarning(space,
                   "the flight recorder's ring (262144 bytes) had overwritten older "
                   "events"));
  CHECK(HasWarning(space, "of the 3600000 ms asked for; raise FlightRecorderOptions::ring_bytes"));
  bool told = false;
  for (const std::string& warning : result->hosts[0].warnings) {
    told = told || Contains(warning, "had overwritten older events");
  }
  CHECK(told);
}

TEST_CASE("a plain remote capture of a flight-recorder process gets its window from the ring") {
  TempDir dir;
  auto server = testing::StartTestServer(dir.path());
  FlightRecorder recorder(RecorderOptions(dir));
  REQUIRE(recorder.status().ok());
  { NEURONPROF_SCOPE("long_before_the_window"); }

  // The window's markers run on this thread while the capture waits on
  // another; the capture gate stays with the recorder all along.
  std::atomic<bool> captured{false};
  absl::StatusOr<CaptureResult> result = absl::UnknownError("not run");
  std::thread client([&] {
    result = Capture(PullOptions(dir, server->port(), 400));
    captured.store(true);
  });
  REQUIRE(testing::WaitFor([&] {
    NEURONPROF_SCOPE("during_the_window");
    return captured.load();
  }));
  client.join();
  REQUIRE(result.ok());
  const XSpace space = HostSpace(*result);
  CHECK(HasEvent(space, "during_the_window"));
  CHECK(HasWarning(space, "served from this process's FlightRecorder"));
  CHECK(rpc::RunningCapturesForTesting() == 0);
}

TEST_CASE("pulling a flight recorder from a process without one names what is missing") {
  TempDir dir;
  auto server = testing::StartTestServer(dir.path());
  CaptureOptions options = PullOptions(dir, server->port(), 1000);
  options.flight_recorder_now = true;
  auto result = Capture(options);
  REQUIRE_FALSE(result.ok());  // Its only host failed.
  CHECK(Contains(std::string(result.status().message()), "no FlightRecorder records"));
  CHECK(Contains(std::string(result.status().message()), "neuronprof_flight_recorder"));
}

TEST_CASE("the flight recorder key takes a bool, 0/1 or \"true\"/\"false\"") {
  TempDir dir;
  rpc::ServiceOptions service_options;
  service_options.allowed_root = dir.path();
  rpc::ProfilerServiceImpl service(service_options);
  auto validate = [&](const tensorflow::ProfileOptions::AdvancedConfigValue& value, bool* now) {
    tensorflow::ProfileRequest request;
    request.set_duration_ms(100);
    request.set_emit_xspace(true);
    (*request.mutable_opts()->mutable_advanced_configuration())[rpc::kFlightRecorderNowKey] = value;
    uint64_t duration_ms = 0;
    std::string host;
    rpc::SaveTarget save;
    return service.Validate(request, &duration_ms, &host, &save, now);
  };
  tensorflow::ProfileOptions::AdvancedConfigValue value;
  bool now = false;
  value.set_bool_value(true);
  REQUIRE(validate(value, &now).ok());
  CHECK(now);
  value.set_int64_value(0);
  REQUIRE(validate(value, &now).ok());
  CHECK_FALSE(now);
  value.set_string_value("true");
  REQUIRE(validate(value, &now).ok());
  CHECK(now);
  value.set_string_value("yes");
  const absl::Status refused = validate(value, &now);
  CHECK(refused.code() == absl::StatusCode::kInvalidArgument);
  CHECK(Contains(std::string(refused.message()), "neuronprof_flight_recorder"));
  value.set_int64_value(7);
  CHECK(validate(value, &now).code() == absl::StatusCode::kInvalidArgument);
}

TEST_CASE("FlightRecorderOptions::port starts the server that serves the ring") {
  TempDir dir;
  FlightRecorderOptions options = RecorderOptions(dir);
  SECTION("a bad port is refused") {
    options.port = 70000;
    FlightRecorder recorder(options);
    CHECK(recorder.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(Contains(std::string(recorder.status().message()), "port"));
  }
  SECTION("a free port serves pulls") {
    options.port = testing::RefusedPort();  // Free a moment ago.
    FlightRecorder recorder(options);
    REQUIRE(recorder.status().ok());
    { NEURONPROF_SCOPE("served_by_the_recorders_port"); }
    CaptureOptions pull = PullOptions(dir, options.port, 60000);
    pull.flight_recorder_now = true;
    auto result = Capture(pull);
    REQUIRE(result.ok());
    CHECK(HasEvent(HostSpace(*result), "served_by_the_recorders_port"));
    auto dump = recorder.Dump("with server");
    REQUIRE(dump.ok());
    CHECK(dump->warnings.empty());  // The server started: nothing to warn of.
  }
}

// A flight-recorder process whose ring holds kFillerEvents markers (a
// response of MBs: more than HTTP/2's flow control lets through to a
// client that does not read), its server, and clients of it.
struct FilledRecorder {
  explicit FilledRecorder(const TempDir& dir, int64_t response_timeout_ms = 60 * 1000) {
    ProfilerServerOptions server_options;
    server_options.port = 0;
    server_options.allowed_root = dir.path();
    server_options.response_timeout_ms = response_timeout_ms;
    auto started = ProfilerServer::Start(server_options);
    REQUIRE(started.ok());
    server = std::move(*started);
    FlightRecorderOptions options = RecorderOptions(dir);
    options.ring_bytes = int64_t{64} << 20;
    recorder = std::make_unique<FlightRecorder>(options);
    REQUIRE(recorder->status().ok());
    for (int i = 0; i < kFillerEvents; ++i) NEURONPROF_SCOPE("filler");
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(INT_MAX);
    stub = tensorflow::ProfilerService::NewStub(grpc::CreateCustomChannel(
        Loopback(server->port()), grpc::InsecureChannelCredentials(), args));
    // The clients that do not read keep HTTP/2's 64 KiB windows: without
    // bandwidth probes, their transport never takes more than that unread.
    args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    unread_stub = tensorflow::ProfilerService::NewStub(grpc::CreateCustomChannel(
        Loopback(server->port()), grpc::InsecureChannelCredentials(), args));
    request.set_duration_ms(3600 * 1000);
    request.set_emit_xspace(true);
    request.set_host_name("unread");
    (*request.mutable_opts()->mutable_advanced_configuration())[rpc::kFlightRecorderNowKey]
        .set_bool_value(true);
  }
  ~FilledRecorder() {
    for (auto& call : unread) call->context.TryCancel();
    queue.Shutdown();
    void* tag = nullptr;
    bool ok = false;
    while (queue.Next(&tag, &ok)) {
    }
  }

  // `count` clients that take the response headers and never read the
  // response. The headers come with the response: once they are in,
  // every handler has returned and its response waits for its client.
  void StartUnread(int count) {
    for (int i = 0; i < count; ++i) {
      unread.push_back(std::make_unique<Unread>());
      unread.back()->reader =
          unread_stub->PrepareAsyncProfile(&unread.back()->context, request, &queue);
      unread.back()->reader->StartCall();
      unread.back()->reader->ReadInitialMetadata(unread.back().get());
    }
    for (int i = 0; i < count; ++i) {
      void* tag = nullptr;
      bool ok = false;
      REQUIRE(queue.AsyncNext(&tag, &ok, std::chrono::system_clock::now() + kBound) ==
              grpc::CompletionQueue::NextStatus::GOT_EVENT);
      REQUIRE(ok);
    }
  }

  grpc::Status Profile(tensorflow::ProfileResponse* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + kBound);
    return stub->Profile(&context, request, response);
  }

  struct Unread {
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientAsyncResponseReader<tensorflow::ProfileResponse>> reader;
  };
  std::unique_ptr<ProfilerServer> server;
  std::unique_ptr<FlightRecorder> recorder;
  std::unique_ptr<tensorflow::ProfilerService::Stub> stub;
  std::unique_ptr<tensorflow::ProfilerService::Stub> unread_stub;
  tensorflow::ProfileRequest request;
  grpc::CompletionQueue queue;
  std::vector<std::unique_ptr<Unread>> unread;
};

TEST_CASE("clients that do not read their responses hold at most kMaxProfileCalls calls") {
  TempDir dir;
  FilledRecorder process(dir);
  process.StartUnread(rpc::kMaxProfileCalls);
  CHECK(rpc::ProfileCallsForTesting() == rpc::kMaxProfileCalls);
  tensorflow::ProfileResponse response;
  const grpc::Status status = process.Profile(&response);
  CHECK(status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED);
  CHECK(Contains(status.error_message(), "not read yet"));
  // Once those clients go, their places are free again.
  for (auto& call : process.unread) call->context.TryCancel();
  REQUIRE(testing::WaitFor([] { return rpc::ProfileCallsForTesting() == 0; }));
  CHECK(process.Profile(&response).ok());
  CHECK(HasEvent(response.xspace(), "filler"));
}

TEST_CASE("a response waiting for its client holds its bytes, not the capture it was made of") {
  TempDir dir;
  FilledRecorder process(dir);
  const session::MappedArenaCounts before = session::CountMappedArenas();
  process.StartUnread(1);
  // Its handler has returned and its bytes wait for the client.
  CHECK(rpc::ProfileCallsForTesting() == 1);
  // The capture was built on a mapped arena (none under GCC's TSan: heap)
  // and every block of it is unmapped, not held until the client reads.
  if (session::NewMappedArena() != nullptr) {
    CHECK(session::CountMappedArenas().blocks_ever > before.blocks_ever);
  }
  CHECK(testing::WaitFor([] { return session::CountMappedArenas().mapped_bytes == 0; }));
  CHECK(rpc::ProfileCallsForTesting() == 1);
}

TEST_CASE("a response its client does not read is dropped after response_timeout_ms") {
  TempDir dir;
  FilledRecorder process(dir, /*response_timeout_ms=*/100);
  const int dropped = rpc::DroppedResponsesForTesting();
  process.StartUnread(1);
  // Its deadline: 100 ms plus 1 s per MiB of the response.
  REQUIRE(testing::WaitFor([&] {
    return rpc::DroppedResponsesForTesting() == dropped + 1 && rpc::ProfileCallsForTesting() == 0;
  }));
  tensorflow::ProfileResponse unread_response;
  grpc::Status unread_status;
  process.unread[0]->reader->Finish(&unread_response, &unread_status, &unread_status);
  void* tag = nullptr;
  bool ok = false;
  REQUIRE(process.queue.AsyncNext(&tag, &ok, std::chrono::system_clock::now() + kBound) ==
          grpc::CompletionQueue::NextStatus::GOT_EVENT);
  CHECK(unread_status.error_code() == grpc::StatusCode::CANCELLED);
  // A client that reads gets its response.
  tensorflow::ProfileResponse response;
  CHECK(process.Profile(&response).ok());
  CHECK(HasEvent(response.xspace(), "filler"));
  CHECK(rpc::DroppedResponsesForTesting() == dropped + 1);
}

}  // namespace
}  // namespace neuronprof
