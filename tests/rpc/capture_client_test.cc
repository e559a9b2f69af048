// neuronprof::Capture against real ProfilerServers: one in this process,
// more as child processes (test_capture_server), one killed mid-capture.
// Waits are on conditions (a capture running, a line from a child), never
// on sleeps.
#include "src/rpc/capture_client.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <grpcpp/generic/async_generic_service.h>
#include <grpcpp/grpcpp.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "proto/profiler_service.grpc.pb.h"
#include "src/core/clock.h"
#include "src/export/atomic_file.h"
#include "src/export/gzip.h"
#include "src/export/logdir.h"
#include "src/export/map_entry_rewrite.h"
#include "src/rpc/profiler_service_impl.h"
#include "src/rpc/service_address.h"
#include "src/xplane/clock_offset.h"
#include "src/xplane/job_identity.h"
#include "src/xplane/sanitizers.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/export/map_churn.h"
#include "tests/export/trace_text.h"
#include "tests/rpc/rpc_test_util.h"
#include "tests/test_util.h"

extern char** environ;

namespace neuronprof {
namespace {

using tensorflow::profiler::XPlane;
using tensorflow::profiler::XSpace;
using testing::Contains;
using testing::DeterministicBytes;
using testing::Exists;
using testing::HasEvent;
using testing::kBound;
using testing::RefusedPort;
using testing::TempDir;
using testing::WaitFor;

std::string Message(const absl::Status& status) { return std::string(status.message()); }

std::string Loopback(int port) { return "127.0.0.1:" + std::to_string(port); }

// A ProfilerServer in this process.
struct LocalServer {
  explicit LocalServer(const std::string& allowed_root)
      : server(testing::StartTestServer(allowed_root)) {}
  std::string address() const { return Loopback(server->port()); }
  std::unique_ptr<ProfilerServer> server;
};

// Records markers on a thread until destroyed; `start` holds them back.
class MarkerThread {
 public:
  explicit MarkerThread(std::function<bool()> start = [] { return true; })
      : thread_([this, start] {
          SetCurrentThreadName("client_markers");
          while (!stop_.load()) {
            if (start()) {
              ScopedTrace marker("client_marker");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }) {}
  ~MarkerThread() {
    stop_.store(true);
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// test_capture_server as a child process: its stdin keeps it alive, its
// stdout says "port N" and then "capturing" per window.
class ChildServer {
 public:
  // `args` follow ALLOWED_ROOT; `env` ("NAME=value") is added to (and
  // replaces the same names of) this process's environment.
  explicit ChildServer(const std::string& allowed_root, std::vector<std::string> args = {},
                       const std::vector<std::string>& env = {}) {
    int in[2], out[2];
    REQUIRE(pipe2(in, O_CLOEXEC) == 0);
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::string path = NEURONPROF_TEST_CAPTURE_SERVER;
    std::string root = allowed_root;
    std::vector<char*> argv = {path.data(), root.data()};
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_strings = env;
    for (char** var = environ; *var != nullptr; ++var) {
      const std::string entry = *var;
      const std::string name = entry.substr(0, entry.find('=') + 1);
      if (std::none_of(env.begin(), env.end(),
                       [&](const std::string& e) { return e.rfind(name, 0) == 0; })) {
        env_strings.push_back(entry);
      }
    }
    std::vector<char*> envp;
    for (std::string& entry : env_strings) envp.push_back(entry.data());
    envp.push_back(nullptr);
    const int spawned =
        posix_spawn(&pid_, path.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
    REQUIRE(spawned == 0);
    std::string line;
    REQUIRE(ReadLine(&line));
    REQUIRE(line.rfind("port ", 0) == 0);
    port_ = std::stoi(line.substr(5));
  }

  ~ChildServer() {
    if (stdin_ >= 0) close(stdin_);  // The child exits at EOF.
    if (pid_ > 0) {
      const auto deadline = std::chrono::steady_clock::now() + kBound;
      while (waitpid(pid_, nullptr, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
          kill(pid_, SIGKILL);
          waitpid(pid_, nullptr, 0);
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    if (stdout_ >= 0) close(stdout_);
  }

  int port() const { return port_; }
  std::string address() const { return Loopback(port_); }

  // Waits for the child to report an open capture window.
  bool WaitCapturing() {
    std::string line;
    while (ReadLine(&line)) {
      if (line == "capturing") return true;
    }
    return false;
  }

  void Kill() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  // One line of the child's stdout, within kBound.
  bool ReadLine(std::string* line) {
    line->clear();
    const auto deadline = std::chrono::steady_clock::now() + kBound;
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd fd{stdout_, POLLIN, 0};
      if (poll(&fd, 1, static_cast<int>(left.count())) <= 0) return false;
      char c;
      if (read(stdout_, &c, 1) != 1) return false;
      if (c == '\n') return true;
      line->push_back(c);
    }
  }

  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  int port_ = 0;
};

CaptureOptions Options(const std::string& logdir, std::vector<std::string> addresses,
                       int64_t duration_ms) {
  CaptureOptions options;
  options.service_addresses = std::move(addresses);
  options.logdir = logdir;
  options.duration_ms = duration_ms;
  options.run_name = "run";
  return options;
}

// The final report of every host, as on_progress announces them.
struct Finished {
  std::vector<HostCaptureResult> hosts;
  void Attach(CaptureOptions* options) {
    options->on_progress = [this](const CaptureProgress& progress) {
      if (progress.finished) hosts.push_back(*progress.finished);
    };
  }
};

TEST_CASE("service addresses parse with optional grpc:// and IPv6 brackets") {
  auto plain = rpc::ParseServiceAddress("worker0:9012");
  REQUIRE(plain.ok());
  CHECK(plain->host == "worker0");
  CHECK(plain->port == 9012);
  CHECK(plain->Target() == "worker0:9012");
  auto prefixed = rpc::ParseServiceAddress("grpc://10.0.0.2:8466");
  REQUIRE(prefixed.ok());
  CHECK(prefixed->address == "10.0.0.2:8466");
  CHECK(prefixed->host == "10.0.0.2");
  auto v6 = rpc::ParseServiceAddress("[::1]:9012");
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->Target() == "[::1]:9012");
  for (const char* bad :
       {"", "worker0", "worker0:", ":9012", "worker0:0", "worker0:65536", "worker0:x", "worker0:-1",
        "::1:9012", "[::1]9012", "a/b:1", "grpc://", "http://worker0:1"}) {
    CAPTURE(bad);
    auto parsed = rpc::ParseServiceAddress(bad);
    CHECK(absl::IsInvalidArgument(parsed.status()));
  }
}

TEST_CASE("a port range stands for one address per port; bad ranges are refused") {
  auto range = rpc::ParseServiceAddresses("grpc://node1:9012-9015");
  REQUIRE(range.ok());
  REQUIRE(range->size() == 4);
  for (int i = 0; i < 4; ++i) {
    CHECK((*range)[i].host == "node1");
    CHECK((*range)[i].port == 9012 + i);
    CHECK((*range)[i].address == "node1:" + std::to_string(9012 + i));
  }
  auto v6 = rpc::ParseServiceAddresses("[::1]:9012-9013");
  REQUIRE(v6.ok());
  REQUIRE(v6->size() == 2);
  CHECK((*v6)[1].address == "[::1]:9013");
  auto one = rpc::ParseServiceAddresses("my-host:9012");  // '-' in a host name.
  REQUIRE(one.ok());
  REQUIRE(one->size() == 1);
  CHECK((*one)[0].host == "my-host");
  auto same = rpc::ParseServiceAddresses("node1:9012-9012");
  REQUIRE(same.ok());
  CHECK(same->size() == 1);
  CHECK(rpc::ParseServiceAddresses("node1:1-1024").ok());

  struct Case {
    const char* text;
    const char* why;
  } cases[] = {
      {"node1:9015-9012", "reversed"},   {"node1:9012-10036", "1025 ports"},
      {"node1:0-3", "1..65535"},         {"node1:65535-65536", "1..65535"},
      {"node1:9012-", "1..65535"},       {"node1:9012-x", "1..65535"},
      {"node1:-9012", "1..65535"},       {"node1:9012--9013", "1..65535"},
      {":9012-9013", "host is missing"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.text);
    auto parsed = rpc::ParseServiceAddresses(c.text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(absl::IsInvalidArgument(parsed.status()));
    CHECK(Contains(Message(parsed.status()), c.why));
    CHECK(Contains(Message(parsed.status()), c.text));
  }
  // In the options too, with the entry named; and a range overlapping a
  // listed address would capture one server twice.
  CaptureOptions options;
  options.service_addresses = {"node1:9012", "node1:9015-9012"};
  CHECK(Contains(Message(ValidateCaptureOptions(options)), "service_addresses[1]"));
  options.service_addresses = {"node1:9013", "node1:9012-9015"};
  CHECK(Contains(Message(ValidateCaptureOptions(options)), "'node1:9013' twice"));
  options.service_addresses = {"node1:9012-9015", "node2:9012-9015"};
  CHECK(ValidateCaptureOptions(options).ok());
}

TEST_CASE("the Profile request carries what TSL's capture client sends") {
  CaptureOptions options;
  options.duration_ms = 1234;
  options.host_tracer_level = 3;
  options.device_tracer_level = 0;
  auto address = rpc::ParseServiceAddress("grpc://worker0:9012");
  REQUIRE(address.ok());
  const tensorflow::ProfileRequest request =
      rpc::BuildProfileRequest(options, *address, "/logs/plugins/profile", "2026_01_02");
  CHECK(request.duration_ms() == 1234);
  CHECK(request.opts().duration_ms() == 1234);
  CHECK(request.opts().version() == 1);
  CHECK(request.opts().host_tracer_level() == 3);
  CHECK(request.opts().device_tracer_level() == 0);
  CHECK(request.opts().python_tracer_level() == 0);
  CHECK(request.opts().session_id() == "2026_01_02");
  CHECK(request.opts().start_timestamp_ns() > 0);
  CHECK(request.session_id() == "2026_01_02");
  CHECK(request.repository_root() == "/logs/plugins/profile");
  CHECK(request.host_name() == "worker0");
  CHECK(request.emit_xspace());
  CHECK(request.max_events() > 0);
  std::vector<std::string> tools(request.tools().begin(), request.tools().end());
  CHECK(std::find(tools.begin(), tools.end(), "trace_viewer") != tools.end());
  CHECK(std::find(tools.begin(), tools.end(), "xplane.pb") != tools.end());
}

TEST_CASE("host names are the server's plain name or host_port, with the port when shared") {
  auto address = rpc::ParseServiceAddress("10.0.0.2:9012");
  REQUIRE(address.ok());
  XSpace space;
  const std::string_view kChrome = ".trace.json.gz";
  CHECK(rpc::BaseHostName(space, *address, false, kChrome) == "10.0.0.2_9012");
  space.add_hostnames("worker0");
  CHECK(rpc::BaseHostName(space, *address, false, kChrome) == "worker0");
  CHECK(rpc::BaseHostName(space, *address, true, kChrome) == "worker0_9012");
  space.set_hostnames(0, "not/plain");
  CHECK(rpc::BaseHostName(space, *address, false, kChrome) == "10.0.0.2_9012");
  // A server name whose <name>.trace.json.gz would pass NAME_MAX (255):
  // host_port instead, not a failed write after the capture.
  space.set_hostnames(0, std::string(241, 'w'));  // 241 + 14 = 255 bytes.
  CHECK(rpc::BaseHostName(space, *address, false, kChrome) == std::string(241, 'w'));
  CHECK(rpc::BaseHostName(space, *address, true, kChrome) == "10.0.0.2_9012");
  space.set_hostnames(0, std::string(242, 'w'));
  CHECK(rpc::BaseHostName(space, *address, false, kChrome) == "10.0.0.2_9012");
  CHECK(rpc::BaseHostName(space, *address, false, ".xplane.pb") == std::string(242, 'w'));
}

TEST_CASE("a rank of a distributed job is named <host>_rank<r>, not by its port") {
  auto address = rpc::ParseServiceAddress("10.0.0.2:9013");
  REQUIRE(address.ok());
  XSpace space;
  space.add_hostnames("worker0");
  xplane::JobIdentity identity;
  identity.rank = 5;
  identity.local_rank = 1;
  identity.world_size = 8;
  xplane::AddJobIdentity(identity, &space);
  const std::string_view kChrome = ".trace.json.gz";
  CHECK(rpc::BaseHostName(space, *address, false, kChrome) == "worker0_rank5");
  CHECK(rpc::BaseHostName(space, *address, true, kChrome) == "worker0_rank5");
  // Rank 0 of 1 (or no stats, another profiler): as before.
  identity = xplane::JobIdentity();
  xplane::AddJobIdentity(identity, &space);
  CHECK(rpc::BaseHostName(space, *address, true, kChrome) == "worker0_9013");
}

TEST_CASE("a host name too long for its files is refused before the capture starts") {
  TempDir dir;
  const std::string logdir = dir.path() + "/logs";
  // <240 x h>_9012.pt.trace.json.gz is 262 bytes, .trace.json.gz 259;
  // .xplane.pb alone 255.
  const std::string address = std::string(240, 'h') + ":9012";
  CaptureOptions options = Options(logdir, {"127.0.0.1:1", address}, 100);
  options.write_pytorch_trace = true;  // The default outputs.
  options.write_chrome_trace.reset();
  auto result = Capture(options);
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsInvalidArgument(result.status()));
  CHECK(Contains(Message(result.status()), "CaptureOptions::service_addresses[1]"));
  CHECK(Contains(Message(result.status()), "'<host>_<port>.pt.trace.json.gz' would be 262 bytes"));
  CHECK(Contains(Message(result.status()), "255 (NAME_MAX)"));
  CHECK_FALSE(Exists(logdir));  // Refused before any run folder was made.
  // Without the Kineto trace the Chrome trace is written by default.
  options.write_pytorch_trace = false;
  CHECK(Contains(Message(ValidateCaptureOptions(options)),
                 "'<host>_<port>.trace.json.gz' would be 259 bytes"));
  options.write_chrome_trace = false;
  CHECK(ValidateCaptureOptions(options).ok());
}

TEST_CASE("a profile the server saved is read and a FIFO in its place is refused at once") {
  TempDir dir;
  auto address = rpc::ParseServiceAddress("worker0:9012");
  REQUIRE(address.ok());
  const std::string saved = dir.path() + "/worker0.xplane.pb";
  std::string saved_file;

  XSpace space;
  space.add_hostnames("worker0");
  REQUIRE(exporter::WriteFileAtomically(saved, space.SerializeAsString()).ok());
  tensorflow::ProfileResponse response;  // No xspace, no tool data: a TSL server.
  auto read = rpc::ResponseSpace(&response, *address, dir.path(), &saved_file);
  REQUIRE(read.ok());
  CHECK(read->hostnames(0) == "worker0");
  CHECK(saved_file == saved);

  // A FIFO with no writer: a plain read would wait for one forever.
  REQUIRE(unlink(saved.c_str()) == 0);
  REQUIRE(mkfifo(saved.c_str(), 0600) == 0);
  saved_file.clear();
  auto from_fifo = rpc::ResponseSpace(&response, *address, dir.path(), &saved_file);
  REQUIRE_FALSE(from_fifo.ok());
  CHECK(absl::IsInvalidArgument(from_fifo.status()));
  CHECK(Contains(Message(from_fifo.status()), "worker0:9012"));
  CHECK(Contains(Message(from_fifo.status()), saved));
  CHECK(Contains(Message(from_fifo.status()), "FIFO"));
  CHECK(saved_file.empty());
}

TEST_CASE("bad capture options are refused with the field named") {
  TempDir dir;
  const std::string logdir = dir.path() + "/logs";
  const CaptureOptions good = Options(logdir, {"127.0.0.1:1"}, 100);
  REQUIRE(ValidateCaptureOptions(good).ok());
  struct Case {
    std::function<void(CaptureOptions&)> change;
    std::string field;
  };
  const std::vector<Case> cases = {
      {[](CaptureOptions& o) { o.service_addresses.clear(); }, "service_addresses"},
      {[](CaptureOptions& o) { o.service_addresses = {"nohost"}; }, "service_addresses[0]"},
      {[](CaptureOptions& o) {
         o.service_addresses = {"a:1", "b:0"};
       },
       "service_addresses[1]"},
      {[](CaptureOptions& o) {
         o.service_addresses = {"a:1", "grpc://a:1"};
       },
       "service_addresses"},
      {[](CaptureOptions& o) { o.duration_ms = 0; }, "duration_ms"},
      {[](CaptureOptions& o) { o.duration_ms = 3600 * 1000 + 1; }, "duration_ms"},
      {[](CaptureOptions& o) { o.num_tracing_attempts = 0; }, "num_tracing_attempts"},
      {[](CaptureOptions& o) { o.host_tracer_level = 4; }, "host_tracer_level"},
      {[](CaptureOptions& o) { o.host_tracer_level = -1; }, "host_tracer_level"},
      {[](CaptureOptions& o) { o.device_tracer_level = 3; }, "device_tracer_level"},
      {[](CaptureOptions& o) { o.python_tracer_level = 2; }, "python_tracer_level"},
      {[](CaptureOptions& o) { o.connect_timeout_ms = 0; }, "connect_timeout_ms"},
      {[](CaptureOptions& o) { o.run_name = "../x"; }, "run_name"},
      {[](CaptureOptions& o) { o.logdir.clear(); }, "logdir"},
  };
  for (const Case& c : cases) {
    CaptureOptions options = good;
    c.change(options);
    CAPTURE(c.field);
    const absl::Status validated = ValidateCaptureOptions(options);
    CHECK(absl::IsInvalidArgument(validated));
    CHECK(Contains(Message(validated), c.field));
    auto captured = Capture(options);
    CHECK(absl::IsInvalidArgument(captured.status()));
  }
  CHECK_FALSE(Exists(logdir));  // Refused before touching the disk.
}

// The decompressed text of the gzipped trace at `path`.
std::string TraceText(const std::string& path) {
  auto gzipped = exporter::ReadFile(path);
  REQUIRE(gzipped.ok());
  auto text = exporter::GzipDecompress(*gzipped);
  REQUIRE(text.ok());
  return *text;
}

TEST_CASE("capture from one server: files hold the markers of the window, Kineto's too") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;
  CaptureOptions options = Options(dir.path(), {server.address()}, 300);
  std::vector<CaptureProgress> reports;
  options.on_progress = [&](const CaptureProgress& progress) { reports.push_back(progress); };
  auto result = Capture(options);
  REQUIRE(result.ok());
  CHECK(result->run_dir == dir.path() + "/plugins/profile/run");
  REQUIRE(result->hosts.size() == 1);
  const HostCaptureResult& host = result->hosts[0];
  REQUIRE(host.status.ok());
  CHECK(result->all_ok());
  CHECK(host.address == server.address());
  CHECK(host.host == "127.0.0.1");
  CHECK(host.attempts == 1);
  CHECK(host.events > 0);
  CHECK(host.empty_reasons.empty());
  const std::string xplane = result->run_dir + "/127.0.0.1.xplane.pb";
  REQUIRE(host.files.size() == 2);
  CHECK(host.files[0] == xplane);
  // By default, as a Profiler does: the Kineto trace the PyTorch plugin and
  // HTA read, in <logdir>/<run>/, which Perfetto opens too: no Chrome trace.
  CHECK(host.files[1] == dir.path() + "/run/127.0.0.1.pt.trace.json.gz");
  CHECK_FALSE(Exists(result->run_dir + "/127.0.0.1.trace.json.gz"));
  const XSpace space = testing::ReadXSpace(xplane);
  CHECK(HasEvent(space, "client_marker"));
  CHECK(xplane::NumEvents(space) == host.events);
  // The trace holds the events of the xplane.pb, as its own writer writes them.
  CHECK(testing::SortedTraceLines(TraceText(host.files[1])) ==
        testing::SortedTraceLines(testing::KinetoTraceText(space)));

  // One report announces the host's end; every report has the window.
  int finished = 0;
  for (const CaptureProgress& progress : reports) {
    CHECK(progress.duration_ms == 300);
    REQUIRE(progress.hosts.size() == 1);
    if (progress.finished) {
      ++finished;
      CHECK(progress.finished->status.ok());
      CHECK(progress.hosts[0].state == HostCaptureState::kSucceeded);
    }
  }
  CHECK(finished == 1);
  CHECK(rpc::RunningCapturesForTesting() == 0);

  // Every stage is reported, in order, however short it was (the first
  // periodic reports may still show kConnecting). The server announces the
  // size of its response before sending it.
  std::vector<std::string> stages;
  int64_t announced_bytes = -1;
  for (const CaptureProgress& progress : reports) {
    const HostProgress& progress_host = progress.hosts[0];
    const std::string stage = HostCaptureStateName(progress_host.state);
    if (progress_host.state == HostCaptureState::kReceiving) {
      announced_bytes = progress_host.response_bytes;
    }
    if (progress_host.state == HostCaptureState::kConnecting) continue;
    if (stages.empty() || stages.back() != stage) stages.push_back(stage);
  }
  CHECK(stages ==
        std::vector<std::string>{"window", "server collecting", "receiving", "writing", "done"});
  CHECK(announced_bytes > 0);
  CHECK(announced_bytes == host.timings.response_bytes);
  CHECK(host.timings.window_ms == 300);
}

TEST_CASE("the Chrome trace is written when asked, or when the Kineto trace is not") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;
  CaptureOptions options = Options(dir.path(), {server.address()}, 100);
  options.write_pytorch_trace = false;
  options.run_name = "no_kineto";
  auto result = Capture(options);
  REQUIRE(result.ok());
  REQUIRE(result->hosts[0].status.ok());
  CHECK(result->hosts[0].files ==
        std::vector<std::string>{result->run_dir + "/127.0.0.1.xplane.pb",
                                 result->run_dir + "/127.0.0.1.trace.json.gz"});

  options.write_pytorch_trace = true;
  options.write_chrome_trace = true;
  options.run_name = "both";
  result = Capture(options);
  REQUIRE(result.ok());
  const HostCaptureResult& host = result->hosts[0];
  REQUIRE(host.status.ok());
  REQUIRE(host.files.size() == 3);
  CHECK(host.files[1] == result->run_dir + "/127.0.0.1.trace.json.gz");
  CHECK(host.files[2] == dir.path() + "/both/127.0.0.1.pt.trace.json.gz");
  // Both hold the events of the xplane.pb, as their own writers write them.
  const XSpace space = testing::ReadXSpace(host.files[0]);
  CHECK(testing::SortedTraceLines(TraceText(host.files[1])) ==
        testing::SortedTraceLines(testing::ChromeTraceText(space)));
  CHECK(testing::SortedTraceLines(TraceText(host.files[2])) ==
        testing::SortedTraceLines(testing::KinetoTraceText(space)));
}

TEST_CASE("the deprecated write_kineto_trace still decides, over write_pytorch_trace") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;
  CaptureOptions options = Options(dir.path(), {server.address()}, 100);
  options.write_pytorch_trace = true;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  options.write_kineto_trace = false;  // Code written before the rename.
#pragma GCC diagnostic pop
  options.run_name = "old_name";
  auto result = Capture(options);
  REQUIRE(result.ok());
  REQUIRE(result->hosts[0].status.ok());
  CHECK(result->hosts[0].files ==
        std::vector<std::string>{result->run_dir + "/127.0.0.1.xplane.pb",
                                 result->run_dir + "/127.0.0.1.trace.json.gz"});
}

TEST_CASE("a host's files are written when it answers, while another still connects") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;
  // Accepts connections (the kernel completes them) but never speaks gRPC:
  // its host stays connecting until the test closes it.
  int silent_port = 0;
  const int silent = testing::ListenOnFreeLoopbackPort(&silent_port);
  CaptureOptions options = Options(dir.path(), {server.address(), Loopback(silent_port)}, 100);
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  options.connect_timeout_ms = 60 * 1000;
  bool checked = false;
  options.on_progress = [&](const CaptureProgress& progress) {
    if (!progress.finished || progress.finished->address != server.address()) return;
    // The good host is done and its file is in place; the silent one is not
    // finished, and only fails once closed here.
    REQUIRE(progress.finished->status.ok());
    REQUIRE(progress.finished->files.size() == 1);
    CHECK(Exists(progress.finished->files[0]));
    CHECK(testing::ReadXSpace(progress.finished->files[0]).planes_size() > 0);
    CHECK(progress.hosts[1].state == HostCaptureState::kConnecting);
    close(silent);
    checked = true;
  };
  auto result = Capture(options);
  REQUIRE(checked);
  REQUIRE(result.ok());
  CHECK(result->hosts[0].status.ok());
  CHECK(absl::IsUnavailable(result->hosts[1].status));
}

TEST_CASE("a grpc:// address works and is reported without the prefix") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;
  CaptureOptions options = Options(dir.path(), {"grpc://" + server.address()}, 100);
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  auto result = Capture(options);
  REQUIRE(result.ok());
  REQUIRE(result->hosts[0].status.ok());
  CHECK(result->hosts[0].address == server.address());
  CHECK(result->hosts[0].files.size() == 1);
  CHECK_FALSE(Exists(result->run_dir + "/127.0.0.1.trace.json.gz"));
  CHECK_FALSE(Exists(dir.path() + "/run"));
}

TEST_CASE("a refused host is reported while the other host's profile is written") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;
  const std::string refused = Loopback(RefusedPort());
  auto result = Capture(Options(dir.path(), {server.address(), refused}, 100));
  REQUIRE(result.ok());
  REQUIRE(result->hosts.size() == 2);
  CHECK_FALSE(result->all_ok());
  CHECK(result->hosts[0].status.ok());
  CHECK(Exists(result->hosts[0].files[0]));
  const HostCaptureResult& failed = result->hosts[1];
  CHECK(failed.address == refused);
  CHECK(absl::IsUnavailable(failed.status));
  CHECK(Contains(Message(failed.status), "cannot connect to " + refused));
  CHECK(failed.files.empty());
  CHECK(failed.attempts == 0);
}

TEST_CASE("when every host fails the error lists each and no run folder is left") {
  TempDir dir;
  const std::string first = Loopback(RefusedPort());
  const std::string second = Loopback(RefusedPort());
  const auto start = std::chrono::steady_clock::now();
  auto result = Capture(Options(dir.path(), {first, second}, 100));
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsUnavailable(result.status()));
  CHECK(Contains(Message(result.status()), "cannot connect to " + first));
  CHECK(Contains(Message(result.status()), "cannot connect to " + second));
  CHECK_FALSE(Exists(dir.path() + "/plugins/profile/run"));
  // Refused connections fail at once, not at connect_timeout_ms.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
}

TEST_CASE("empty windows are retried and then reported, host_tracer_level 0") {
  TempDir dir;
  LocalServer server(dir.path());
  MarkerThread markers;  // Filtered out at level 0.
  CaptureOptions options = Options(dir.path(), {server.address()}, 30);
  options.host_tracer_level = 0;
  options.num_tracing_attempts = 2;
  Finished finished;
  finished.Attach(&options);
  auto result = Capture(options);
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsFailedPrecondition(result.status()));
  CHECK(Contains(Message(result.status()), "host_tracer_level 0"));
  CHECK(Contains(Message(result.status()), "2 attempt(s)"));
  REQUIRE(finished.hosts.size() == 1);
  CHECK(finished.hosts[0].attempts == 2);
  REQUIRE(finished.hosts[0].empty_reasons.size() == 2);
  CHECK(Contains(finished.hosts[0].empty_reasons[0], "host_tracer_level 0"));
  CHECK(finished.hosts[0].files.empty());
  CHECK_FALSE(Exists(dir.path() + "/plugins/profile/run"));
}

TEST_CASE("empty windows are retried and then reported, no markers ran") {
  TempDir dir;
  LocalServer server(dir.path());
  CaptureOptions options = Options(dir.path(), {server.address()}, 30);
  options.num_tracing_attempts = 3;
  Finished finished;
  finished.Attach(&options);
  auto result = Capture(options);
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsNotFound(result.status()));
  CHECK(Contains(Message(result.status()), "3 attempt(s)"));
  // The server's explanation reaches the client.
  CHECK(Contains(Message(result.status()), "no neuronprof markers ran during the"));
  REQUIRE(finished.hosts.size() == 1);
  CHECK(finished.hosts[0].attempts == 3);
  CHECK(finished.hosts[0].empty_reasons.size() == 3);
  CHECK_FALSE(Exists(dir.path() + "/plugins/profile/run"));

  // Without a server warning the client says it in its own words.
  auto address = rpc::ParseServiceAddress("worker0:9012");
  REQUIRE(address.ok());
  XSpace bare;
  CHECK(rpc::EmptyCaptureReason(options, *address, &bare) ==
        "no markers ran on worker0:9012 during the 30 ms window");
}

TEST_CASE("an empty window is retried and the next one with events is kept") {
  TempDir dir;
  LocalServer server(dir.path());
  // Markers start once the client reports its second window.
  std::atomic<bool> second_window{false};
  MarkerThread markers([&] { return second_window.load(); });
  CaptureOptions options = Options(dir.path(), {server.address()}, 400);
  options.on_progress = [&](const CaptureProgress& progress) {
    if (progress.hosts[0].attempt >= 2) second_window.store(true);
  };
  auto result = Capture(options);
  REQUIRE(result.ok());
  const HostCaptureResult& host = result->hosts[0];
  REQUIRE(host.status.ok());
  CHECK(host.attempts == 2);
  REQUIRE(host.empty_reasons.size() == 1);
  CHECK(Contains(host.empty_reasons[0], "no neuronprof markers ran"));
  CHECK(HasEvent(testing::ReadXSpace(host.files[0]), "client_marker"));
}

TEST_CASE("two servers are captured in parallel into one run folder") {
  TempDir dir;
  ChildServer first(dir.path());
  ChildServer second(dir.path());
  auto result = Capture(Options(dir.path(), {first.address(), second.address()}, 300));
  REQUIRE(result.ok());
  CHECK(result->all_ok());
  REQUIRE(result->hosts.size() == 2);
  // Both servers report host "127.0.0.1": the port tells them apart.
  CHECK(result->hosts[0].host == "127.0.0.1_" + std::to_string(first.port()));
  CHECK(result->hosts[1].host == "127.0.0.1_" + std::to_string(second.port()));
  for (const HostCaptureResult& host : result->hosts) {
    CAPTURE(host.address);
    REQUIRE(host.files.size() == 2);  // The xplane.pb and the Kineto trace.
    CHECK(host.files[0] == result->run_dir + "/" + host.host + ".xplane.pb");
    CHECK(HasEvent(testing::ReadXSpace(host.files[0]), "helper_marker"));
    CHECK(Exists(host.files[1]));
  }
}

TEST_CASE("a server killed mid-capture fails alone and the other host's files are complete") {
  TempDir dir;
  ChildServer doomed(dir.path());
  ChildServer survivor(dir.path());
  CaptureOptions options = Options(dir.path(), {doomed.address(), survivor.address()}, 1500);
  auto call = std::async(std::launch::async, [&] { return Capture(options); });
  REQUIRE(doomed.WaitCapturing());
  REQUIRE(survivor.WaitCapturing());
  doomed.Kill();
  REQUIRE(call.wait_for(kBound) == std::future_status::ready);
  auto result = call.get();
  REQUIRE(result.ok());
  REQUIRE(result->hosts.size() == 2);
  const HostCaptureResult& killed = result->hosts[0];
  CHECK(absl::IsUnavailable(killed.status));
  CHECK(Contains(Message(killed.status), doomed.address()));
  CHECK(killed.files.empty());
  const HostCaptureResult& kept = result->hosts[1];
  REQUIRE(kept.status.ok());
  REQUIRE(kept.files.size() == 2);
  const XSpace space = testing::ReadXSpace(kept.files[0]);
  CHECK(HasEvent(space, "helper_marker"));
  CHECK(xplane::NumEvents(space) == kept.events);
  CHECK(Exists(kept.files[1]));
  // Only the survivor's files are in the run folder.
  CHECK_FALSE(Exists(result->run_dir + "/" + killed.host + ".xplane.pb"));
}

}  // namespace
}  // namespace neuronprof

namespace neuronprof {
namespace {

// Ranks of one distributed job on this host, each a child process whose
// server a Profiler started on base + LOCAL_RANK (RANK, LOCAL_RANK and
// WORLD_SIZE set per child, as torchrun does).
std::vector<std::unique_ptr<ChildServer>> StartRanks(const std::string& root, int ranks,
                                                     int* base) {
  *base = testing::FreeLoopbackPortRange(ranks);
  std::vector<std::unique_ptr<ChildServer>> children;
  for (int rank = 0; rank < ranks; ++rank) {
    const std::string r = std::to_string(rank);
    children.push_back(std::make_unique<ChildServer>(
        root, std::vector<std::string>{"profiler", std::to_string(*base)},
        std::vector<std::string>{"RANK=" + r, "LOCAL_RANK=" + r,
                                 "WORLD_SIZE=" + std::to_string(ranks)}));
    REQUIRE(children.back()->port() == *base + rank);
  }
  return children;
}

TEST_CASE("every rank of a host is captured by one port range into one run folder") {
  TempDir dir;
  constexpr int kRanks = 3;
  int base = 0;
  auto children = StartRanks(dir.path(), kRanks, &base);
  CaptureOptions options =
      Options(dir.path(),
              {"127.0.0.1:" + std::to_string(base) + "-" + std::to_string(base + kRanks - 1)}, 300);
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  auto result = Capture(options);
  REQUIRE(result.ok());
  REQUIRE(result->hosts.size() == kRanks);
  CHECK(result->all_ok());
  std::vector<std::string> expected;
  for (int rank = 0; rank < kRanks; ++rank) {
    const HostCaptureResult& host = result->hosts[rank];
    CAPTURE(rank);
    CHECK(host.address == Loopback(base + rank));  // In range order.
    // The file name comes from the rank the server reported, not its port.
    CHECK(host.host == "127.0.0.1_rank" + std::to_string(rank));
    REQUIRE(host.files.size() == 1);
    CHECK(host.files[0] == result->run_dir + "/" + host.host + ".xplane.pb");
    const XSpace space = testing::ReadXSpace(host.files[0]);
    const xplane::JobIdentity identity = xplane::ReadJobIdentity(space);
    CHECK(identity.rank == rank);
    CHECK(identity.local_rank == rank);
    CHECK(identity.world_size == kRanks);
    CHECK(HasEvent(space, "helper_marker"));
    expected.push_back(host.host + ".xplane.pb");
  }
  // One file per rank, nothing else.
  CHECK(testing::ListDir(result->run_dir) == expected);
}

// libfaketime, when installed (scripts/install_deps.sh): a child whose
// CLOCK_REALTIME runs an hour ahead of this process's.
constexpr char kLibFaketime[] = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1";
constexpr int64_t kHourNs = int64_t{3600} * 1000 * 1000 * 1000;
// clang links ASan's runtime into the executable itself: libfaketime,
// preloaded before it, deadlocks such a child at startup.
#if defined(__clang__)
constexpr bool kClangAsan = neuronprof::kAddressSanitizer;
#else
constexpr bool kClangAsan = false;
#endif

TEST_CASE("a host whose clock is an hour ahead is measured and put on the client's clock") {
  if (!Exists(kLibFaketime)) {
    WARN("libfaketime is not installed (apt-get install faketime): not run");
    return;
  }
  if (kClangAsan) {
    // The normal (gcc) build runs it.
    WARN("libfaketime deadlocks a clang ASan child at startup: not run here");
    return;
  }
  TempDir dir;
  // Only the wall clock is shifted: gRPC's timers run on the monotonic one.
  // In the ASan build the preloaded library comes before ASan's runtime,
  // which ASan refuses unless told not to check (ignored without ASan).
  const char* asan_options = getenv("ASAN_OPTIONS");
  ChildServer skewed(dir.path(), {},
                     {std::string("LD_PRELOAD=") + kLibFaketime, "FAKETIME=+3600",
                      "FAKETIME_DONT_FAKE_MONOTONIC=1", "FAKETIME_NO_CACHE=1",
                      std::string("ASAN_OPTIONS=") +
                          (asan_options != nullptr ? std::string(asan_options) + ":" : "") +
                          "verify_asan_link_order=0"});
  CaptureOptions options = Options(dir.path(), {skewed.address()}, 200);
  const int64_t before = core::EpochNowNs();
  auto result = Capture(options);
  const int64_t after = core::EpochNowNs();
  REQUIRE(result.ok());
  const HostCaptureResult& host = result->hosts[0];
  REQUIRE(host.status.ok());
  REQUIRE(host.clock_offset_measured);
  CAPTURE(host.clock_offset_ns, host.clock_offset_uncertainty_ns);
  // The true skew lies within the measured uncertainty.
  CHECK(std::abs(host.clock_offset_ns - kHourNs) <= host.clock_offset_uncertainty_ns);
  CHECK(host.clock_offset_uncertainty_ns > 0);

  const XSpace space = testing::ReadXSpace(host.files[0]);
  // The server's window, an hour ahead on its clock, lies within this
  // call on the client's.
  CHECK(xplane::ProfileStartEpochNs(space) >= before);
  CHECK(xplane::ProfileStopEpochNs(space) <= after);
  const auto recorded = xplane::ReadClockOffset(space);
  REQUIRE(recorded.has_value());
  CHECK(recorded->offset_ns == host.clock_offset_ns);
  CHECK(recorded->uncertainty_ns == host.clock_offset_uncertainty_ns);
  CHECK(HasEvent(space, "helper_marker"));

  // The Kineto trace goes where a Profiler puts its own, one per host.
  const std::string kineto = dir.path() + "/run/" + host.host + ".pt.trace.json.gz";
  CHECK(std::find(host.files.begin(), host.files.end(), kineto) != host.files.end());
  CHECK(Exists(kineto));
}

// A ProfilerService as TSL's: Profile only (Monitor is UNIMPLEMENTED), its
// lines on the epoch.
class TslLikeService final : public tensorflow::ProfilerService::Service {
 public:
  static constexpr int64_t kStart = int64_t{1'760'000'000'000'000'000};

  static XSpace Space() {
    XSpace space;
    xplane::SetProfileTimes(&space, kStart, kStart + 1'000'000);
    xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
    auto* line = host.AddLine(1, "main", kStart + 10);
    host.AddEvent(line, host.EventMetadataId("tsl_marker"), 0, 5000);
    space.add_hostnames("tslhost");
    return space;
  }
  grpc::Status Profile(grpc::ServerContext*, const tensorflow::ProfileRequest*,
                       tensorflow::ProfileResponse* response) override {
    *response->mutable_xspace() = Space();
    return grpc::Status::OK;
  }
};

TEST_CASE("a server without the clock probe is captured unchanged with its offset unmeasured") {
  TempDir dir;
  TslLikeService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server != nullptr);
  CaptureOptions options = Options(dir.path(), {Loopback(port)}, 50);
  options.write_chrome_trace = false;
  auto result = Capture(options);
  server->Shutdown();
  REQUIRE(result.ok());
  const HostCaptureResult& host = result->hosts[0];
  REQUIRE(host.status.ok());
  CHECK_FALSE(host.clock_offset_measured);
  CHECK(host.clock_offset_ns == 0);
  XSpace written = testing::ReadXSpace(host.files[0]);
  CHECK_FALSE(xplane::ReadClockOffset(written).has_value());
  {
    const XPlane* environment = xplane::FindPlane(written, xplane::kTaskEnvironmentPlaneName);
    REQUIRE(environment != nullptr);
    const xplane::PlaneVisitor visitor(*environment);
    const auto alignment = visitor.PlaneStat(xplane::kClockAlignmentStat);
    REQUIRE(alignment.has_value());
    CHECK(alignment->StrValue().value_or("") == xplane::kClockUnmeasured);
  }
  // Apart from that record, byte for byte what the server sent.
  XSpace expected = TslLikeService::Space();
  xplane::AlignSpaceClock(std::nullopt, &expected);
  CHECK(DeterministicBytes(written) == DeterministicBytes(expected));
}

// A server that answers every Profile call with the same bytes, whatever
// they are, and knows no other method (Monitor: no clock probe).
class CannedProfileServer final : public grpc::CallbackGenericService {
 public:
  explicit CannedProfileServer(std::string response) : response_(std::move(response)) {}

  grpc::ServerGenericBidiReactor* CreateReactor(
      grpc::GenericCallbackServerContext* context) override {
    class Reactor final : public grpc::ServerGenericBidiReactor {
     public:
      explicit Reactor(const std::string* response) {
        if (response == nullptr) {
          Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, ""));
          return;
        }
        grpc::Slice slice(*response);
        reply_ = grpc::ByteBuffer(&slice, 1);
        StartRead(&request_);
      }
      void OnReadDone(bool) override { StartWriteAndFinish(&reply_, {}, grpc::Status::OK); }
      void OnDone() override { delete this; }

     private:
      grpc::ByteBuffer request_, reply_;
    };
    const bool profile = context->method() == "/tensorflow.ProfilerService/Profile";
    return new Reactor(profile ? &response_ : nullptr);
  }

 private:
  const std::string response_;
};

std::string FileBytes(const std::string& path) {
  auto bytes = exporter::ReadRegularFile(path, INT_MAX, "too large");
  REQUIRE(bytes.ok());
  return *bytes;
}

TEST_CASE("a hostile server's map entries reach the client's parse rewritten: linear") {
  // Each churning entry costs protobuf 3.21 an insert, an erase and a scan
  // of its table: counted in the bytes it is handed (map_churn.h).
  constexpr int kHeld = 2000;
  constexpr int kChurn = 20000;
  const std::string space_bytes = testing::ChurningCaptureSpace(kHeld, kChurn);
  REQUIRE(testing::ChurningEntries(space_bytes) == 2 * kChurn);
  std::string response;
  testing::AppendBytesField(8, space_bytes, &response);
  CannedProfileServer hostile(response);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&hostile);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server != nullptr);
  TempDir dir;
  auto result = Capture(Options(dir.path(), {Loopback(port)}, 50));
  server->Shutdown();
  REQUIRE(result.ok());
  const HostCaptureResult& host = result->hosts[0];
  REQUIRE(host.status.ok());
  CHECK(host.host == "crafted_rank1");  // Its Task Environment plane was read.
  REQUIRE(host.files.size() == 2);

  // The xplane.pb holds the bytes the client parsed for its traces: the
  // file reader's rewrite of the server's, then the client's Task
  // Environment plane. Protobuf takes one insert per entry there.
  const std::string written = FileBytes(host.files[0]);
  CHECK(testing::ChurningEntries(written) == 0);
  const auto canonical = exporter::CanonicalMapEntries(space_bytes);
  REQUIRE(canonical.ok());
  REQUIRE(canonical->has_value());
  // After the Task Environment plane (the first field), as rewritten.
  const std::string& rewritten = **canonical;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(rewritten.data()),
                                            static_cast<int>(rewritten.size()));
  uint32_t environment_size = 0;
  REQUIRE(in.ReadTag() == 0x0a);
  REQUIRE(in.ReadVarint32(&environment_size));
  const std::string rest = rewritten.substr(in.CurrentPosition() + environment_size);
  CHECK(written.substr(written.size() - std::min(written.size(), rest.size())) == rest);
  XSpace expected;
  REQUIRE(expected.ParseFromString(**canonical));
  xplane::AlignSpaceClock(std::nullopt, &expected);
  CHECK(DeterministicBytes(testing::ReadXSpace(host.files[0])) == DeterministicBytes(expected));
  const auto& metadata = expected.planes(1).stat_metadata();
  CHECK(metadata.at(testing::kChurnKey).name() == "churn_" + std::to_string(kChurn - 1));

  // The traces are what the file reader's XSpace gives.
  TempDir reference;
  exporter::ExportOptions export_options;
  export_options.chrome_trace = false;
  export_options.pytorch_trace_dir = reference.path();
  auto files = exporter::WriteProfileFiles(expected, reference.path(), host.host, export_options);
  REQUIRE(files.ok());
  REQUIRE(files->size() == 2);
  CHECK(FileBytes(host.files[1]) == FileBytes((*files)[1]));
}

TEST_CASE("windows of every host open together when writing is limited to one host") {
  TempDir dir;
  constexpr int kRanks = 3;
  int base = 0;
  auto children = StartRanks(dir.path(), kRanks, &base);
  CaptureOptions options =
      Options(dir.path(),
              {"127.0.0.1:" + std::to_string(base) + "-" + std::to_string(base + kRanks - 1)}, 300);
  options.write_chrome_trace = false;
  options.write_pytorch_trace = false;
  options.max_parallel_hosts = 1;
  auto result = Capture(options);
  REQUIRE(result.ok());
  REQUIRE(result->all_ok());
  // Every window overlaps every other: none waited for another's writing.
  int64_t latest_start = 0, earliest_stop = INT64_MAX;
  for (const HostCaptureResult& host : result->hosts) {
    CHECK(host.clock_offset_measured);
    const XSpace space = testing::ReadXSpace(host.files[0]);
    latest_start = std::max(latest_start, xplane::ProfileStartEpochNs(space));
    earliest_stop = std::min(earliest_stop, xplane::ProfileStopEpochNs(space));
  }
  CHECK(latest_start < earliest_stop);
}

TEST_CASE("a port where another program listens is named as not a ProfilerService") {
  TempDir dir;
  int port = 0;
  // Listens, never speaks HTTP/2: a port range that runs into another program.
  const int fd = testing::ListenOnFreeLoopbackPort(&port);
  CaptureOptions options = Options(dir.path(), {Loopback(port)}, 50);
  options.connect_timeout_ms = 500;
  options.connect_attempts = 2;
  auto result = Capture(options);
  close(fd);
  REQUIRE_FALSE(result.ok());
  CAPTURE(Message(result.status()));
  CHECK(Contains(Message(result.status()), Loopback(port)));
  CHECK(Contains(Message(result.status()), "not a ProfilerService"));
  CHECK(Contains(Message(result.status()), "(2 attempts)"));
}

// Another gRPC program: it knows no tensorflow.ProfilerService method.
class OtherGrpcProgram final : public grpc::CallbackGenericService {
  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext*) override {
    class Unimplemented final : public grpc::ServerGenericBidiReactor {
     public:
      Unimplemented() { Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "")); }
      void OnDone() override { delete this; }
    };
    return new Unimplemented;
  }
};

TEST_CASE("a gRPC server without ProfilerService is named as such") {
  TempDir dir;
  OtherGrpcProgram other;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterCallbackGenericService(&other);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  REQUIRE(server != nullptr);
  auto result = Capture(Options(dir.path(), {Loopback(port)}, 50));
  server->Shutdown();
  REQUIRE_FALSE(result.ok());
  CAPTURE(Message(result.status()));
  CHECK(absl::IsUnimplemented(result.status()));
  CHECK(Contains(Message(result.status()), Loopback(port)));
  CHECK(Contains(Message(result.status()), "not a ProfilerService"));
}

TEST_CASE("a connection that fails before the window is retried and reaches the server") {
  TempDir dir;
  int port = 0;
  // First something that accepts and hangs up (a server still starting
  // behind a proxy, say): the client's first connection fails there.
  const int fd = testing::ListenOnFreeLoopbackPort(&port);
  CaptureOptions options = Options(dir.path(), {Loopback(port)}, 100);
  options.connect_attempts = 5;
  MarkerThread markers;
  auto capture = std::async(std::launch::async, [&] { return Capture(options); });
  pollfd ready{fd, POLLIN, 0};
  REQUIRE(poll(&ready, 1, static_cast<int>(kBound.count() * 1000)) == 1);
  const int connection = accept(fd, nullptr, nullptr);
  REQUIRE(connection >= 0);
  // Reset, not closed: no FIN_WAIT socket is left holding the port.
  const linger reset{1, 0};
  setsockopt(connection, SOL_SOCKET, SO_LINGER, &reset, sizeof(reset));
  close(connection);
  close(fd);
  // Then the real server on that port, for the next attempt.
  ProfilerServerOptions server_options;
  server_options.port = port;
  server_options.allowed_root = dir.path();
  auto server = ProfilerServer::Start(server_options);
  REQUIRE(server.ok());
  auto result = capture.get();
  REQUIRE(result.ok());
  CHECK(result->hosts[0].status.ok());
  CHECK(HasEvent(testing::ReadXSpace(result->hosts[0].files[0]), "client_marker"));
}

}  // namespace
}  // namespace neuronprof
