// The Kineto trace's text, byte for byte: the PyTorch TensorBoard plugin,
// HTA and Perfetto read it, so a change to the writer (a faster path, a
// cache) must not change a field's order, a number's format or an escape.
// Small captures are compared with golden files in tests/data/kineto_golden
// (written from the writer before its fast paths); one of many chunks
// written on threads, too large to check in, by its length and hash.
// After a deliberate change of the format, rewrite them with
//   NEURONPROF_UPDATE_GOLDEN=1 build/tests/kineto_golden_test
// and review the diff.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "src/xplane/schema.h"
#include "src/xplane/xplane_builder.h"
#include "tests/export/hostile_space.h"
#include "tests/export/kineto_sample_space.h"
#include "tests/export/memory_space.h"
#include "tests/export/trace_text.h"

namespace neuronprof {
namespace {

std::string GoldenPath(const std::string& name) {
  return std::string(NEURONPROF_GOLDEN_DIR) + "/" + name + ".pt.trace.json";
}

// The first line where `text` and the golden file differ, or "" if none.
std::string FirstDifference(const std::string& name, const std::string& text) {
  const std::string path = GoldenPath(name);
  if (std::getenv("NEURONPROF_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) return "no golden file " + path;
  std::stringstream golden;
  golden << file.rdbuf();
  if (golden.str() == text) return "";
  std::istringstream want(golden.str()), got(text);
  std::string want_line, got_line;
  for (int line = 1;; ++line) {
    const bool more_want = static_cast<bool>(std::getline(want, want_line));
    const bool more_got = static_cast<bool>(std::getline(got, got_line));
    if (!more_want && !more_got) return "same lines, different line ends";
    if (!more_want || !more_got || want_line != got_line) {
      return "line " + std::to_string(line) + "\n  golden:  " + want_line +
             "\n  written: " + got_line;
    }
  }
}

// Operators as the host collector writes them: the stats that every call
// with the same inputs shares on the event's metadata (as strings and as
// interned refs), the rest on the event; some events override a metadata
// stat with their own, one signature has dims that are not JSON.
tensorflow::profiler::XSpace SignatureSpace() {
  using tensorflow::profiler::XEventMetadata;
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  const auto add = [&](XEventMetadata* metadata, std::string_view name, std::string_view value,
                       bool ref) {
    tensorflow::profiler::XStat* stat = metadata->add_stats();
    stat->set_metadata_id(host.StatMetadataId(name));
    if (ref) {
      stat->set_ref_value(static_cast<uint64_t>(host.StatMetadataId(value)));
    } else {
      stat->set_str_value(std::string(value));
    }
  };
  XEventMetadata* addmm = host.NewEventMetadata("aten::addmm");
  add(addmm, xplane::kOpFrameworkStat, "aten", false);
  add(addmm, xplane::kOpDirectionStat, "fprop", true);
  add(addmm, xplane::kOpInputDimsStat, "[[2, 3], [3, 4], []]", true);
  add(addmm, xplane::kOpInputTypesStat, "Float, Float,Scalar", true);
  add(addmm, xplane::kOpInputValuesStat, "[\"\", \"\", \"1\"]", false);
  XEventMetadata* view = host.NewEventMetadata("aten::view");
  add(view, xplane::kOpFrameworkStat, "aten", true);
  add(view, xplane::kOpInputDimsStat, "[[2, 3]", false);
  add(view, xplane::kOpInputTypesStat, "Long,BFloat16,c10::Weird", false);
  add(view, "layer", "fc1", true);
  xplane::XLine* main = host.AddLine(1001, "MainThread", 0);
  int64_t at_ps = 0;
  const auto op = [&](const XEventMetadata* metadata) {
    at_ps += 2'000'000;
    return host.AddEvent(main, metadata->id(), at_ps, 1'000'000);
  };
  for (int64_t seq = 0; seq < 3; ++seq) {
    tensorflow::profiler::XEvent* event = op(addmm);
    host.AddStat(event, xplane::kOpSequenceStat, seq);
    host.AddStat(event, "tf_op", std::string_view("aten__addmm:aten__addmm"));
    host.AddStat(event, "flops", int64_t{24});
  }
  host.AddStat(op(addmm), xplane::kOpInputTypesStat, std::string_view("Half,Half,Scalar"));
  host.AddRefStat(op(addmm), xplane::kOpInputDimsStat, "[[1,3],[3,4],[]]");
  tensorflow::profiler::XEvent* backward = op(view);
  host.AddStat(backward, xplane::kOpSequenceStat, int64_t{1});
  host.AddStat(backward, xplane::kOpForwardThreadStat, int64_t{1001});
  op(view);
  // Own stats that must not take the shared text: one named like a key
  // the writer adds, one overriding a metadata stat, one repeated.
  host.AddStat(op(addmm), "dtype", std::string_view("float32"));
  host.AddStat(op(addmm), xplane::kOpDirectionStat, std::string_view("bprop"));
  tensorflow::profiler::XEvent* twice = op(addmm);
  host.AddStat(twice, "flops", int64_t{1});
  host.AddStat(twice, "flops", int64_t{2});
  xplane::SetProfileTimes(&space, testing::kStartEpochNs, testing::kStartEpochNs + 100'000);
  return space;
}

// Memory events as libtorch's allocator records them, and crafted ones
// whose args must be checked for repeated keys: a stat named like a key
// written, a stat repeated, stats on the event's metadata.
tensorflow::profiler::XSpace CraftedMemorySpace() {
  tensorflow::profiler::XSpace space;
  xplane::XPlaneBuilder host(xplane::FindOrAddPlane(&space, xplane::kHostPlaneName));
  xplane::XLine* main = host.AddLine(1001, "MainThread", 0);
  int64_t at_ps = 0;
  const auto alloc = [&](int64_t metadata_id, std::string_view device) {
    at_ps += 1'000'000;
    tensorflow::profiler::XEvent* event = host.AddEvent(main, metadata_id, at_ps, 0);
    host.AddStat(event, xplane::kAllocatorNameStat, std::string_view("cpu"));
    host.AddStat(event, xplane::kMemoryDeviceTypeStat, device);
    host.AddStat(event, xplane::kAddressStat, int64_t{4096});
    host.AddStat(event, xplane::kAllocationBytesStat, int64_t{512});
    host.AddStat(event, xplane::kBytesAllocatedStat, int64_t{1024});
    host.AddStat(event, xplane::kTfOpStat, std::string_view("aten::empty"));
    return event;
  };
  const int64_t allocation = host.EventMetadataId(xplane::kMemoryAllocationEvent);
  alloc(allocation, "CPU");
  alloc(allocation, "NPU");
  host.AddStat(alloc(allocation, "CPU"), "Bytes", std::string_view("mine"));
  host.AddStat(alloc(allocation, "CPU"), xplane::kTfOpStat, std::string_view("aten::zeros"));
  tensorflow::profiler::XEventMetadata* shared =
      host.NewEventMetadata(xplane::kMemoryDeallocationEvent);
  tensorflow::profiler::XStat* on_metadata = shared->add_stats();
  on_metadata->set_metadata_id(host.StatMetadataId(xplane::kTfOpStat));
  on_metadata->set_str_value("aten::add");
  alloc(shared->id(), "CUDA");
  xplane::SetProfileTimes(&space, testing::kStartEpochNs, testing::kStartEpochNs + 100'000);
  return space;
}

uint64_t Fnv1a(std::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

TEST_CASE("kineto golden: operators, steps, flows, runtime and device events") {
  CHECK(FirstDifference("sample", testing::KinetoTraceText(testing::KinetoSampleSpace())) == "");
}

TEST_CASE("kineto golden: operator inputs shared on their metadata, some overridden") {
  CHECK(FirstDifference("signatures", testing::KinetoTraceText(SignatureSpace())) == "");
}

TEST_CASE("kineto golden: memory events of every device and allocator") {
  CHECK(FirstDifference("memory", testing::KinetoTraceText(testing::MemorySpace())) == "");
}

TEST_CASE("kineto golden: crafted memory events that repeat a key") {
  CHECK(FirstDifference("memory_crafted", testing::KinetoTraceText(CraftedMemorySpace())) == "");
}

TEST_CASE("kineto golden: hostile strings and int64 extremes") {
  CHECK(FirstDifference("hostile", testing::KinetoTraceText(testing::HostileStringsSpace())) == "");
  CHECK(FirstDifference("extreme_times", testing::KinetoTraceText(testing::ExtremeTimesSpace())) ==
        "");
}

TEST_CASE("kineto golden: a capture of many chunks written on threads") {
  const std::string text = testing::KinetoTraceText(testing::ManyStepsSpace(2000));
  CHECK(text.size() == 10'796'561);
  CHECK(Fnv1a(text) == 0x280c57bac639d466ull);
}

}  // namespace
}  // namespace neuronprof
