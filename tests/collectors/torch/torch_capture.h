// kOperator captures around a piece of libtorch code, and their host
// events with stats as text, for the libtorch collector's tests.
#ifndef NEURONPROF_TESTS_TORCH_TORCH_CAPTURE_H_
#define NEURONPROF_TESTS_TORCH_TORCH_CAPTURE_H_

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "src/xplane/xplane_visitor.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace testing {

// One recorded event with its stats as text, in start order per thread.
struct Op {
  std::string name;         // as the viewers show it (display_name, else name)
  std::string xplane_name;  // the metadata's name, as xprof's op stats parse it
  int64_t start_ps = 0;
  int64_t end_ps = 0;
  int64_t line_id = 0;  // The recording thread's line.
  std::map<std::string, std::string> stats;
  bool has(const std::string& key) const { return stats.count(key) > 0; }
  std::string stat(const std::string& key) const {
    auto it = stats.find(key);
    return it == stats.end() ? "" : it->second;
  }
};

// Every event of the host plane, read through the visitor, in start order.
inline std::vector<Op> HostEvents(const tensorflow::profiler::XSpace& space) {
  std::vector<Op> ops;
  const auto* host = xplane::FindPlane(space, xplane::kHostPlaneName);
  if (host == nullptr) return ops;
  xplane::PlaneVisitor(*host).ForEachEvent([&](const xplane::EventVisitor& event) {
    Op op;
    op.name = std::string(event.DisplayName());
    op.xplane_name = std::string(event.Name());
    op.start_ps = event.line().timestamp_ns() * 1000 + event.OffsetPs();
    op.end_ps = op.start_ps + event.DurationPs();
    op.line_id = event.line().id();
    std::string scratch;
    event.ForEachStat([&](const xplane::StatVisitor& stat) {
      op.stats[std::string(stat.Name())] = std::string(stat.TextValue(&scratch));
    });
    ops.push_back(std::move(op));
  });
  std::stable_sort(ops.begin(), ops.end(),
                   [](const Op& a, const Op& b) { return a.start_ps < b.start_ps; });
  return ops;
}

inline std::vector<Op> Named(const std::vector<Op>& ops, const std::string& name) {
  std::vector<Op> out;
  for (const Op& op : ops) {
    if (op.name == name) out.push_back(op);
  }
  return out;
}

inline bool Inside(const Op& inner, const Op& outer) {
  return inner.start_ps >= outer.start_ps && inner.end_ps <= outer.end_ps;
}

// What a kOperator capture around `body` returned, and the file it wrote.
struct OperatorCapture {
  ProfileResult result;
  tensorflow::profiler::XSpace space;
};

// A kOperator Profiler's options for the tests: no server, no Chrome trace.
inline ProfilerOptions OperatorOptions(const std::string& logdir) {
  ProfilerOptions options;
  options.logdir = logdir;
  options.port = 0;
  options.profile_type = ProfileType::kOperator;
  options.write_chrome_trace = false;
  return options;
}

template <typename Body>
OperatorCapture CaptureOperators(Body body, const TorchOperatorOptions& torch_options = {}) {
  REQUIRE(EnableTorchOperators(torch_options).ok());
  testing::TempDir dir;
  Profiler profiler(OperatorOptions(dir.path()));
  REQUIRE(profiler.status().ok());
  body();
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  std::string xplane_path;
  for (const std::string& file : result->files) {
    if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") xplane_path = file;
  }
  REQUIRE(!xplane_path.empty());
  return {*std::move(result), testing::ReadXSpace(xplane_path)};
}

// Runs `body` inside a kOperator capture and returns the host events.
template <typename Body>
std::vector<Op> CaptureOps(Body body, const TorchOperatorOptions& torch_options = {}) {
  return HostEvents(CaptureOperators(body, torch_options).space);
}

// A remote capture (the gRPC server, as TensorBoard's Capture Profile uses
// it) of a 200 ms window while `step` runs in a loop on another thread:
// the host events. Remote captures have no profile_type: operators come
// with host_tracer_level >= 2 once the program has enabled them.
template <typename Step>
std::vector<Op> RemoteCaptureOps(int host_tracer_level, Step step) {
  REQUIRE(EnableTorchOperators().ok());
  testing::TempDir dir;
  ProfilerServerOptions server_options;
  server_options.port = 0;
  server_options.allowed_root = dir.path();
  auto server = ProfilerServer::Start(server_options);
  REQUIRE(server.ok());

  std::atomic<bool> done{false};
  std::thread training([&] {
    while (!done.load()) step();
  });
  CaptureOptions options;
  options.service_addresses = {"127.0.0.1:" + std::to_string((*server)->port())};
  options.logdir = dir.path();
  options.duration_ms = 200;
  options.host_tracer_level = host_tracer_level;
  options.write_chrome_trace = false;
  auto result = Capture(options);
  done.store(true);
  training.join();
  REQUIRE(result.ok());
  REQUIRE(result->hosts.size() == 1);
  REQUIRE(result->hosts[0].status.ok());
  std::string xplane_path;
  for (const std::string& file : result->hosts[0].files) {
    if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") xplane_path = file;
  }
  REQUIRE(!xplane_path.empty());
  return HostEvents(testing::ReadXSpace(xplane_path));
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_TORCH_TORCH_CAPTURE_H_
