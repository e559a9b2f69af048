// c10d collectives in kOperator captures (src/collectors/torch/collectives.h):
// record_param_comms with its debug info, and two ProcessGroupGloo ranks in
// this process (two threads, one HashStore) inside one Profiler window.
#include <ATen/record_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <climits>
#include <cmath>
#include <map>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ParamCommsUtils.hpp>
#include <vector>
#ifdef NEURONPROF_HAVE_GLOO
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/Ops.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif

#include "neuronprof/neuronprof.h"
#include "neuronprof/torch.h"
#include "src/collectors/torch/collectives.h"
#include "src/export/byte_sink.h"
#include "src/export/kineto_trace.h"
#include "tests/collectors/torch/torch_capture.h"
#include "tests/test_util.h"

namespace neuronprof {
namespace {

using testing::HostEvents;
using testing::Named;
using testing::Op;

TEST_CASE("record_param_comms carries its ParamCommsDebugInfo as stats") {
  REQUIRE(torch::kParamCommsCallName == std::string(collectors::libtorch::kParamCommsName));
  torch::Tensor x = torch::ones({256});
  const std::vector<Op> ops = testing::CaptureOps([&] {
    std::vector<int64_t> no_splits;
    // As ProcessGroupNCCL's allreduce does (inSize/outSize are numels).
    RECORD_PARAM_COMMS(3, "allreduce", 256, 256, at::kFloat, no_splits, no_splits);
    x.add_(1);
  });
  const std::vector<Op> comms = Named(ops, "record_param_comms");
  REQUIRE(comms.size() == 1);
  CHECK(comms[0].stat("collective") == "allreduce");
  CHECK(comms[0].stat("msg_bytes") == "1024");
  CHECK(comms[0].stat("out_msg_bytes") == "1024");
  CHECK(comms[0].stat("dtype") == "Float");
  CHECK(comms[0].stat("comm_rank") == "3");
  CHECK(comms[0].stat("framework") == "torch");
  // The ordinary op inside is recorded as always, without comm stats.
  const std::vector<Op> add = Named(ops, "aten::add_");
  REQUIRE_FALSE(add.empty());
  for (const Op& op : add) {
    CHECK(op.stat("framework") == "torch");
    CHECK_FALSE(op.has("collective"));
    CHECK_FALSE(op.has("msg_bytes"));
  }
}

#ifdef NEURONPROF_HAVE_GLOO
TEST_CASE("ProcessGroupGloo collectives of two ranks are recorded with sizes and bandwidth") {
  REQUIRE(EnableTorchOperators().ok());
  testing::TempDir dir;
  ProfilerOptions options = testing::OperatorOptions(dir.path());
  options.rank = 0;
  options.world_size = 2;
  constexpr int64_t kNumel = 1 << 20;  // 4 MiB of floats: ms, not µs.
  constexpr int64_t kBytes = kNumel * 4;
  auto store = c10::make_intrusive<::c10d::HashStore>();
  std::vector<float> reduced(2, 0.0f);

  Profiler profiler(options);
  REQUIRE(profiler.status().ok());
  auto rank_main = [&](int rank) {
    auto gloo_options = ::c10d::ProcessGroupGloo::Options::create();
    gloo_options->devices.push_back(::c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    auto pg = c10::make_intrusive<::c10d::ProcessGroupGloo>(store, rank, 2, gloo_options);
    std::vector<at::Tensor> tensors{torch::full({kNumel}, float(rank + 1))};
    ::c10d::ops::allreduce(pg, tensors)->wait();
    reduced[rank] = tensors[0][0].item<float>();
    std::vector<at::Tensor> root{torch::full({kNumel}, float(rank))};
    ::c10d::ops::broadcast(pg, root)->wait();
    std::vector<std::vector<at::Tensor>> gathered{{torch::empty({kNumel}), torch::empty({kNumel})}};
    std::vector<at::Tensor> input{torch::full({kNumel}, float(rank))};
    pg->allgather(gathered, input)->wait();
    pg->barrier()->wait();
  };
  std::thread rank1(rank_main, 1);
  rank_main(0);
  rank1.join();
  auto result = profiler.Stop();
  REQUIRE(result.ok());
  CHECK(reduced[0] == 3.0f);
  CHECK(reduced[1] == 3.0f);
  std::string xplane_path;
  for (const std::string& file : result->files) {
    if (file.size() > 10 && file.substr(file.size() - 10) == ".xplane.pb") xplane_path = file;
  }
  REQUIRE(!xplane_path.empty());
  const tensorflow::profiler::XSpace space = testing::ReadXSpace(xplane_path);
  const std::vector<Op> ops = HostEvents(space);

  struct Expected {
    const char* name;
    int64_t bytes;
    double algbw_bytes_factor;  // algbw's bytes / msg_bytes (all_gather: n)
    double busbw_factor;
  };
  const Expected expected[] = {
      {"gloo:all_reduce", kBytes, 1.0, 1.0},  // 2(n-1)/n = 1 for n = 2
      {"gloo:broadcast", kBytes, 1.0, 1.0},
      {"gloo:all_gather", kBytes, 2.0, 0.5},
      {"gloo:barrier", 0, 0.0, 0.0},
  };
  int64_t previous_max_seq = -1;
  for (const Expected& e : expected) {
    INFO(e.name);
    const std::vector<Op> work = Named(ops, e.name);
    REQUIRE(work.size() == 2);  // One per rank.
    int64_t min_seq = INT64_MAX;
    int64_t max_seq = -1;
    for (const Op& op : work) {
      CHECK(op.stat("comm_backend") == "gloo");
      CHECK(op.stat("collective") == std::string(e.name).substr(5));
      // xprof's framework_op_stats: a row per collective, typed by it.
      CHECK(op.xplane_name == "gloo/" + op.stat("collective") + ":" + op.stat("collective"));
      CHECK(op.stat("world_size") == "2");
      CHECK(op.stat("msg_bytes") == std::to_string(e.bytes));
      CHECK_FALSE(op.has("framework"));  // Not an operator.
      REQUIRE(op.has("comm_seq"));
      const int64_t seq = std::stoll(op.stat("comm_seq"));
      min_seq = std::min(min_seq, seq);
      max_seq = std::max(max_seq, seq);
      CHECK(op.end_ps > op.start_ps);
      if (e.bytes == 0) {
        CHECK_FALSE(op.has("algbw_gbps"));
        continue;
      }
      CHECK(op.stat("dtype") == "Float");
      const double algbw = std::stod(op.stat("algbw_gbps"));
      const double busbw = std::stod(op.stat("busbw_gbps"));
      CHECK(algbw > 0);
      CHECK(busbw == Approx(algbw * e.busbw_factor).epsilon(1e-4));
      // Measured with steady_clock in the same callbacks as the span.
      const double seconds = (op.end_ps - op.start_ps) * 1e-12;
      const double expected_algbw = e.bytes * e.algbw_bytes_factor / seconds / 1e9;
      CHECK(algbw == Approx(expected_algbw).epsilon(0.05));
    }
    // Each collective starts after every rank finished the previous one.
    CHECK(min_seq > previous_max_seq);
    previous_max_seq = max_seq;
  }
  // Through the dispatcher (c10d::ops, as torch.distributed calls it) the
  // enqueue is an operator on each rank's own thread, linked to its work by
  // comm_id, with the thread's own collective count as comm_seq.
  for (const char* name : {"c10d::allreduce_", "c10d::broadcast_"}) {
    INFO(name);
    const std::vector<Op> enqueues = Named(ops, name);
    REQUIRE(enqueues.size() == 2);
    CHECK(enqueues[0].line_id != enqueues[1].line_id);
    const std::string title =
        std::string(name) == "c10d::allreduce_" ? "gloo:all_reduce" : "gloo:broadcast";
    const std::vector<Op> work = Named(ops, title);
    for (const Op& enqueue : enqueues) {
      CHECK(enqueue.stat("framework") == "torch");
      CHECK(enqueue.stat("comm_seq") == (title == "gloo:all_reduce" ? "0" : "1"));
      REQUIRE(enqueue.has("comm_id"));
      int linked = 0;
      for (const Op& w : work) {
        if (w.stat("comm_id") != enqueue.stat("comm_id")) continue;
        ++linked;
        CHECK(w.line_id != enqueue.line_id);  // Gloo's worker thread.
        CHECK(w.start_ps >= enqueue.start_ps);
        CHECK(w.stat("comm_seq") == enqueue.stat("comm_seq"));
      }
      CHECK(linked == 1);
    }
  }
  // Called on the ProcessGroup directly: no enqueue op, no link.
  for (const Op& w : Named(ops, "gloo:all_gather")) CHECK_FALSE(w.has("comm_id"));
  // Ordinary operators are recorded as before.
  CHECK_FALSE(Named(ops, "aten::full").empty());
  for (const Op& op : Named(ops, "aten::full")) CHECK_FALSE(op.has("collective"));

  // The Kineto trace: torch.profiler's category for gloo:* and the
  // argument names HTA reads from record_param_comms.
  exporter::StringSink sink;
  REQUIRE(exporter::WriteKinetoTrace(space, &sink).ok());
  const std::string& json = sink.text();
  const size_t at = json.find(R"("name":"gloo:all_reduce")");
  REQUIRE(at != std::string::npos);
  const size_t begin = json.rfind("{\"ph\"", at);
  const std::string event = json.substr(begin, json.find('}', json.find("\"args\"", at)) - begin);
  INFO(event);
  CHECK(event.find(R"("cat":"user_annotation")") != std::string::npos);
  CHECK(event.find(R"("Collective name":"all_reduce")") != std::string::npos);
  CHECK(event.find(R"("In msg nelems":)" + std::to_string(kNumel)) != std::string::npos);
  CHECK(event.find(R"("Group size":2)") != std::string::npos);
  CHECK(event.find(R"("dtype":"Float")") != std::string::npos);
  // The Work's inputs as torch.profiler records them with shapes: the
  // plugin's Distributed view sizes each collective from these alone.
  CHECK(event.find(R"("Input Dims":[[)" + std::to_string(kNumel) + "]]") != std::string::npos);
  CHECK(event.find(R"("Input type":["float"])") != std::string::npos);
  // Each rank's enqueue -> work link, as a flow (start and finish).
  size_t flow_starts = 0;
  for (size_t pos = 0; (pos = json.find(R"({"ph":"s","cat":"comm")", pos)) != std::string::npos;
       ++pos) {
    ++flow_starts;
  }
  CHECK(flow_starts == 4);  // all_reduce and broadcast, two ranks each.
}
#endif  // NEURONPROF_HAVE_GLOO

}  // namespace
}  // namespace neuronprof
