// Writes the crafted .xplane.pb inputs of fuzz_xspace_readers:
//   write_xspace_inputs TESTS_FUZZ_DIR
// corpus/xspace/: seeds for paths no example capture reaches (memory
// events and a pool line, one rank of a DDP job with collectives, metadata
// map entries that go on after their value, every operator shape the
// op-cost formulas read, steps of allocator events as libtorch reports them,
// device events that name their op instead of a correlation id);
// corpus/response/map_entry_churn.pb: such entries in a server's response
// (fuzz_capture_response);
// findings/xspace/: issue 27's reproducers, replayed as regression inputs.
// The committed files were made with it (see tests/fuzz/README.md).
#include <cstdio>
#include <limits>
#include <string>

#include "src/export/atomic_file.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/analysis/operator_space.h"
#include "tests/analysis/rank_space.h"
#include "tests/export/map_churn.h"
#include "tests/export/memory_space.h"

namespace {

using neuronprof::testing::AddMemoryEvent;
using tensorflow::profiler::XSpace;
namespace xplane = neuronprof::xplane;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

bool WriteBytes(const std::string& path, const std::string& bytes) {
  auto s = neuronprof::exporter::WriteFileAtomically(path, bytes);
  if (!s.ok()) std::fprintf(stderr, "%s\n", std::string(s.message()).c_str());
  return s.ok();
}

bool Write(const std::string& path, const XSpace& space) {
  std::string bytes;
  return space.SerializeToString(&bytes) && WriteBytes(path, bytes);
}

// An aten::bmm with an empty batch and dimensions of 2^31, unannotated: its
// cost overflowed in summary and in a live capture's AnnotateOperatorEvents.
XSpace BmmEmptyBatch() {
  XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(1, "main", 1000);
  xplane::XEvent* op = host.AddEvent(main, host.EventMetadataId("aten::bmm"), 0, 5000000);
  host.AddStat(op, xplane::kOpFrameworkStat, std::string_view("torch"));
  host.AddStat(op, xplane::kOpInputDimsStat,
               std::string_view("[[0,2147483648,2147483648],[0,2147483648,2147483648]]"));
  host.AddStat(op, xplane::kOpInputTypesStat, std::string_view("float,float"));
  host.AddStat(op, xplane::kOpInputValuesStat, std::string_view("[\"\",\"\"]"));
  return space;
}

// One of each operator shape the op-cost formulas read (convolutions with
// their stride/padding/dilation/groups values, matmul's 1-D to N-D cases,
// reductions, losses forward and backward, embeddings, index_select), an
// autograd node and a dunder op, one after another on one thread.
XSpace OperatorShapes() {
  struct Op {
    const char* name;
    const char* dims;
    const char* types;
    const char* values;
  };
  static constexpr Op kOps[] = {
      {"aten::conv2d", "[[8,3,32,32],[16,3,3,3],[16],[],[],[],[]]", "Float,Float,Float,,,,",
       R"(["","","","[2, 2]","[1, 1]","[1, 1]","1"])"},
      {"aten::conv1d", "[[4,6,50],[10,6,5],[],[],[],[],[]]", "Float,Float,,,,,",
       R"(["","","","[1]","same","[2]","2"])"},
      {"aten::conv3d", "[[1,2,4,8,8],[4,2,3,3,3],[],[],[],[],[]]", "Half,Half,,,,,",
       R"(["","","","[1, 1, 1]","valid","[1, 1, 1]","1"])"},
      {"aten::conv_transpose2d", "[[1,4,8,8],[4,2,3,3],[2],[],[],[],[],[]]",
       "Float,Float,Float,,,,,", R"(["","","","[2, 2]","[1, 1]","[1, 1]","1","[1, 1]"])"},
      {"aten::matmul", "[[2,1,32,16],[3,16,8]]", "Float,Float", R"(["",""])"},
      {"aten::matmul", "[[100],[100]]", "Float,Float", R"(["",""])"},
      {"aten::matmul", "[[16],[4,16,8]]", "BFloat16,BFloat16", R"(["",""])"},
      {"aten::mv", "[[8,16],[16]]", "Float,Float", R"(["",""])"},
      {"aten::sum", "[[64,128],[],[],[]]", "Float,,Scalar,", R"(["","[1]","false",""])"},
      {"aten::mean", "[[64,128]]", "Float", R"([""])"},
      {"aten::norm", "[[64,128],[]]", "Float,Scalar", R"(["","2"])"},
      {"aten::nll_loss_forward", "[[64,10],[64],[],[],[]]", "Float,Long,,Scalar,Scalar",
       R"(["","","","1","-100"])"},
      {"aten::nll_loss_backward", "[[],[64,10],[64],[],[],[],[]]",
       "Float,Float,Long,,Scalar,Scalar,Float", R"(["","","","","1","-100",""])"},
      {"aten::cross_entropy_loss", "[[64,10],[64],[],[],[],[]]", "Float,Long,,Scalar,Scalar,Scalar",
       R"(["","","","1","-100","0."])"},
      {"aten::embedding", "[[1000,64],[32],[],[],[]]", "Float,Long,Scalar,Scalar,Scalar",
       R"(["","","-1","false","false"])"},
      {"aten::embedding_dense_backward", "[[32,64],[32],[],[],[]]",
       "Float,Long,Scalar,Scalar,Scalar", R"(["","","1000","-1","false"])"},
      {"aten::index_select", "[[1000,64],[],[32]]", "Float,Scalar,Long", R"(["","0",""])"},
      {"AddmmBackward0", "[[64,128]]", "Float", R"([""])"},
      {"aten::__iadd__", "[[64,128],[64,128]]", "Float,Float", R"(["",""])"},
  };
  XSpace space;
  xplane::SetProfileTimes(&space, 1'000'000'000, 1'000'000'000 + 1'000'000);
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(1, "main", 0);
  int64_t at_ps = 0;
  for (const Op& op : kOps) {
    xplane::XEvent* e = host.AddEvent(main, host.EventMetadataId(op.name), at_ps, 10'000'000);
    host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
    host.AddStat(e, xplane::kOpInputDimsStat, std::string_view(op.dims));
    host.AddStat(e, xplane::kOpInputTypesStat, std::string_view(op.types));
    host.AddStat(e, xplane::kOpInputValuesStat, std::string_view(op.values));
    at_ps += 20'000'000;
  }
  return space;
}

// Three steps of a training loop as libtorch's allocator reports them,
// before a capture annotates them (no device type or id: the allocator's
// name says "cuda:0"): each step's ops allocate, free the step before's
// activations and leak one block, so the memory report's per-step peaks,
// growth and leaking ops all have rows.
XSpace MemorySteps() {
  XSpace space;
  xplane::SetProfileTimes(&space, 1'000'000'000, 1'000'000'000 + 1'000'000);
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(4242, "MainThread", 0);
  constexpr int64_t kStepPs = 100'000'000;
  int64_t allocated = 0;
  auto memory = [&](const char* name, int64_t at_ps, int64_t address, int64_t bytes,
                    const char* allocator) {
    allocated += name == std::string_view(xplane::kMemoryDeallocationEvent) ? -bytes : bytes;
    xplane::XEvent* e = host.AddEvent(main, host.EventMetadataId(name), at_ps, 0);
    host.AddStat(e, xplane::kAllocatorNameStat, std::string_view(allocator));
    host.AddStat(e, xplane::kAddressStat, address);
    host.AddStat(e, xplane::kRequestedBytesStat, bytes);
    host.AddStat(e, xplane::kAllocationBytesStat, bytes);
    host.AddStat(e, xplane::kBytesAllocatedStat, allocated);
    host.AddStat(e, xplane::kPoolReservedStat, int64_t{1} << 24);
  };
  for (int s = 0; s < 3; ++s) {
    const int64_t base = s * kStepPs;
    xplane::XEvent* step = host.AddEvent(main, host.EventMetadataId("train"), base, kStepPs - 1);
    host.AddStat(step, xplane::kRootLevelStat, int64_t{1});
    host.AddStat(step, xplane::kStepNumStat, int64_t{s});
    for (const char* op : {"aten::linear", "aten::relu"}) {
      xplane::XEvent* e =
          host.AddEvent(main, host.EventMetadataId(op), base + 1'000'000, 10'000'000);
      host.AddStat(e, xplane::kOpFrameworkStat, std::string_view("torch"));
    }
    memory(xplane::kMemoryAllocationEvent, base + 2'000'000, 0x1000 + s, 4096, "cuda:0");
    memory(xplane::kMemoryAllocationEvent, base + 3'000'000, 0x2000 + s, 1024, "cuda:0");
    memory(xplane::kMemoryAllocationEvent, base + 4'000'000, 0x3000 + s, 64, "cpu");
    if (s > 0) {
      memory(xplane::kMemoryDeallocationEvent, base + 5'000'000, 0x1000 + s - 1, 4096, "cuda:0");
    }
  }
  return space;
}

// The operator capture with a device plane whose kernels and copies name
// their framework op (tf_op, as XLA and plug-ins do) instead of a
// correlation id: device time attributed by op name and time.
XSpace DeviceOpsByName() {
  XSpace space = neuronprof::testing::MakeOperatorSpace(2, true);
  for (auto& plane : *space.mutable_planes()) {
    if (plane.name().rfind("/device:", 0) != 0) continue;
    xplane::XPlaneBuilder device(&plane);
    for (auto& line : *plane.mutable_lines()) {
      for (auto& event : *line.mutable_events()) {
        device.AddStat(&event, xplane::kTfOpStat, std::string_view("aten::addmm"));
      }
    }
  }
  return space;
}

// Frees of 10 and INT64_MAX bytes by one op, a total of INT64_MIN and a
// free of INT64_MIN bytes: the memory report and the Kineto writer
// overflowed on them.
XSpace MemoryEdges() {
  XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(7, "main", 1000);
  AddMemoryEvent(host, main, {xplane::kMemoryAllocationEvent, 10, "cpu", "CPU", -1, 1, 10, 10, -1});
  AddMemoryEvent(host, main,
                 {xplane::kMemoryDeallocationEvent, 11, "cpu", "CPU", -1, 1, 10, 0, -1});
  AddMemoryEvent(host, main,
                 {xplane::kMemoryAllocationEvent, 12, "cpu", "CPU", -1, 2, kMax, kMax, -1});
  AddMemoryEvent(host, main,
                 {xplane::kMemoryDeallocationEvent, 13, "cpu", "CPU", -1, 2, kMax, kMin, -1});
  AddMemoryEvent(host, main,
                 {xplane::kMemoryDeallocationEvent, 14, "cpu", "CPU", -1, 3, kMin, 0, -1});
  return space;
}

// One rank whose Task Environment claims world size 2^31-1: summary
// allocated every missing rank (19 GB).
XSpace ClaimedWorldSize() {
  neuronprof::testing::RankSpaceOptions options;
  options.world_size = std::numeric_limits<int>::max();
  options.steps = 1;
  options.straggler = 0;
  return neuronprof::testing::MakeRankSpace(options);
}

// A hostile server's response: a capture whose host and Task Environment
// planes hold map entries protobuf would insert and erase.
std::string ChurningResponse() {
  std::string response;
  neuronprof::testing::AppendBytesField(8, neuronprof::testing::ChurningCaptureSpace(64, 64),
                                        &response);
  return response;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s TESTS_FUZZ_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  neuronprof::testing::RankSpaceOptions ddp;
  ddp.steps = 2;
  const bool ok =
      Write(dir + "/corpus/xspace/memory_events.xplane.pb", neuronprof::testing::MemorySpace()) &&
      Write(dir + "/corpus/xspace/ddp_rank.xplane.pb", neuronprof::testing::MakeRankSpace(ddp)) &&
      WriteBytes(dir + "/corpus/xspace/map_entry_churn.xplane.pb",
                 neuronprof::testing::ChurningStatMetadata(64, 64)) &&
      WriteBytes(dir + "/corpus/response/map_entry_churn.pb", ChurningResponse()) &&
      Write(dir + "/corpus/xspace/operator_shapes.xplane.pb", OperatorShapes()) &&
      Write(dir + "/corpus/xspace/memory_steps.xplane.pb", MemorySteps()) &&
      Write(dir + "/corpus/xspace/device_ops_by_name.xplane.pb", DeviceOpsByName()) &&
      Write(dir + "/findings/xspace/issue27_bmm_empty_batch.xplane.pb", BmmEmptyBatch()) &&
      Write(dir + "/findings/xspace/issue27_memory_int64_edges.xplane.pb", MemoryEdges()) &&
      Write(dir + "/findings/xspace/issue27_world_size_2pow31.xplane.pb", ClaimedWorldSize());
  return ok ? 0 : 1;
}
