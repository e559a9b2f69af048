// Fuzz target: bytes of an .xplane.pb file through every reader path of the
// CLI: `info`'s text, `convert` to a Chrome trace and to a Kineto trace, and
// `summary`'s analysis (text, every table as CSV, the memory, kernel and
// folded-stack outputs, the JSON document, marker statistics per thread
// group, step and time selections) and its multi-rank report (the file as
// one rank of its job, and as two ranks of one); then a live capture's
// post-processing (AnnotateOperatorEvents, AnnotateMemoryEvents) and both
// writers again on the annotated space. Only parse errors may stop it, and
// every JSON output must be strict JSON (json_reader::IsStrictJson): a non-strict
// one aborts, so libFuzzer keeps the input.
//
// Byte mutations rarely keep a protobuf's nested lengths intact while
// changing a time, so each parsed space is read a second time with some of
// its times, durations and integer stats (chosen by a hash of the input)
// set to int64 extremes (and operator shapes to huge or empty ones):
// crafted files hold exactly those.
//
// NEURONPROF_FUZZ_SKIP=chrome,kineto,summary,ranks,annotate,info leaves readers out, to
// look past a known finding in one of them while its fix is pending.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "src/analysis/markers/call_stacks.h"
#include "src/analysis/memory/memory_annotator.h"
#include "src/analysis/ops/custom_op_costs.h"
#include "src/analysis/ops/operator_annotator.h"
#include "src/analysis/ranks/rank_data.h"
#include "src/analysis/ranks/rank_report.h"
#include "src/analysis/report/device_sections.h"
#include "src/analysis/report/rank_sections.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/analysis/report/summary_tables.h"
#include "src/analysis/timeline/selection.h"
#include "src/export/chrome_trace.h"
#include "src/export/kineto_trace.h"
#include "src/export/xspace_file.h"
#include "src/xplane/json_reader.h"
#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "tests/fuzz/quiet_protobuf.h"
#include "tools/info_text.h"
#include "tools/summary_json.h"

namespace {

using neuronprof::SaturatingAdd;
using tensorflow::profiler::XSpace;

bool Skipped(const char* reader) {
  static const char* skip = std::getenv("NEURONPROF_FUZZ_SKIP");
  return skip != nullptr && std::strstr(skip, reader) != nullptr;
}

// Python's json and Perfetto reject the whole file over one bad value. The
// writers stream; a StringSink keeps the whole text for the check.
template <typename Writer>
void RequireStrictJson(const XSpace& space, Writer write, const char* writer) {
  neuronprof::exporter::StringSink sink;
  if (!write(space, &sink).ok()) {
    std::fprintf(stderr, "%s failed on a string sink\n", writer);
    std::abort();
  }
  if (neuronprof::json_reader::IsStrictJson(sink.text())) return;
  std::fprintf(stderr, "%s wrote JSON that is not strict (%zu bytes)\n", writer,
               sink.text().size());
  std::abort();
}

void WriteBoth(const XSpace& space) {
  if (!Skipped("chrome")) {
    RequireStrictJson(space, neuronprof::exporter::WriteChromeTrace, "WriteChromeTrace");
  }
  if (!Skipped("kineto")) {
    RequireStrictJson(space, neuronprof::exporter::WriteKinetoTrace, "WriteKinetoTrace");
  }
}

constexpr int64_t kLatePs = 1'000'000;

// A formula registered for a custom op (neuronprof/op_costs.h), as an
// application would write one, so that the file's shapes reach that path
// too: its (flops, bytes) may overflow to a saturated or negative value.
[[maybe_unused]] const bool kCustomOpCost = [] {
  neuronprof::analysis::RegisterCustomOpCost(
      "aten::foo_unknown",
      [](const std::vector<neuronprof::analysis::OpInput>& inputs) {
        int64_t flops = 0;
        for (const auto& input : inputs) {
          int64_t elements = 1;
          for (int64_t d : input.dims) elements = neuronprof::SaturatingMul(elements, d);
          flops = SaturatingAdd(flops, elements);
        }
        return std::pair<int64_t, int64_t>(flops, neuronprof::SaturatingMul(flops, -4));
      })
      .IgnoreError();
  return true;
}();

void ReportRanks(std::vector<neuronprof::analysis::RankData> ranks) {
  namespace analysis = neuronprof::analysis;
  if (auto report = analysis::BuildRankReport(std::move(ranks)); report.ok()) {
    analysis::FormatRankReportText(*report, 0);
    analysis::FormatRankStepsCsv(*report);
    analysis::FormatCollectivesCsv(*report);
  }
}

void ReadAll(const XSpace& space) {
  namespace analysis = neuronprof::analysis;
  if (!Skipped("info")) neuronprof::tools::FormatInfo(space);
  WriteBoth(space);
  if (!Skipped("summary")) {
    const auto summary = analysis::Summarize(space, {}, analysis::GroupBy::kThreadGroup);
    analysis::FormatSummaryText(summary, 0);
    analysis::FormatOpTableCsv(summary.table);
    const auto tables = analysis::SummaryTables(summary);
    for (const auto& table : tables) analysis::FormatCsv(table);
    // summary's optional outputs: --memory_csv, --kernel_csv, --folded.
    analysis::FormatMemoryCsv(summary.memory);
    analysis::FormatKernelCsv(summary.kernels);
    analysis::FormatFolded(summary.stacks);
    const std::string json = neuronprof::tools::SummaryJson("input", "", summary, tables);
    if (!neuronprof::json_reader::IsStrictJson(json)) {
      std::fprintf(stderr, "SummaryJson wrote JSON that is not strict (%zu bytes)\n", json.size());
      std::abort();
    }
    analysis::Selection steps, window;
    steps.steps = {{0, 1}};
    window.window_ms = {{0, 1}};
    for (const auto& selection : {steps, window}) {
      const auto selected = analysis::Select(space, selection);
      if (selected.ok()) analysis::FormatSummaryText(analysis::Summarize(selected->space), 0);
    }
  }
  if (!Skipped("ranks")) {
    std::vector<analysis::RankData> ranks;
    ranks.push_back(analysis::ReadRankData(space, "fuzz_rank0.xplane.pb"));
    ReportRanks(ranks);
    // The file as two ranks of one job too, the second 1 us late to every
    // step's end and collective: the comparisons across ranks (steps,
    // stragglers, waiting, collectives matched by sequence).
    analysis::RankData other = ranks[0];
    other.file = "fuzz_rank1.xplane.pb";
    for (auto& step : other.steps) step.end_ps = SaturatingAdd(step.end_ps, kLatePs);
    for (auto& c : other.collectives) c.arrival_ps = SaturatingAdd(c.arrival_ps, kLatePs);
    other.identity.rank = ranks[0].identity.rank == 0 ? 1 : 0;
    ranks[0].identity.world_size = std::max(2, ranks[0].identity.world_size);
    other.identity.world_size = ranks[0].identity.world_size;
    ranks.push_back(std::move(other));
    ReportRanks(ranks);
  }
  if (!Skipped("annotate")) {
    // What a live capture's session does before writing.
    XSpace annotated = space;
    analysis::AnnotateOperatorEvents(&annotated);
    analysis::AnnotateMemoryEvents(&annotated);
    WriteBoth(annotated);
  }
}

uint64_t Fnv1a(const uint8_t* data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 0x100000001b3ULL;
  return hash;
}

// Sets roughly one field in four to an extreme value, as picked by `bits`.
void ApplyExtremes(uint64_t bits, XSpace* space) {
  static constexpr int64_t kValues[] = {std::numeric_limits<int64_t>::max(),
                                        std::numeric_limits<int64_t>::min(),
                                        -1,
                                        std::numeric_limits<int64_t>::max() / 1000,
                                        std::numeric_limits<int64_t>::min() / 1000,
                                        std::numeric_limits<int>::max()};
  // Operator shapes: huge dimensions beside empty ones, and at the parser's bound.
  static constexpr const char* kDims[] = {
      "[[0,2147483648,2147483648],[0,2147483648,2147483648]]",
      "[[1099511627776,0],[0,4611686018427387904],[9223372036854775807]]",
      "[[1048576,1048576],[1048576,1048576],[1048576]]", "[[0,1,9223372036854775807,1,1]]"};
  auto next = [&bits]() {
    bits ^= bits << 13;
    bits ^= bits >> 7;
    bits ^= bits << 17;
    return bits;
  };
  auto maybe = [&](auto set) {
    const uint64_t r = next();
    if (r % 4 == 0) set(kValues[(r >> 8) % std::size(kValues)]);
  };
  for (auto& plane : *space->mutable_planes()) {
    int64_t dims_id = -1;
    for (const auto& [id, metadata] : plane.stat_metadata()) {
      if (metadata.name() == neuronprof::xplane::kOpInputDimsStat) dims_id = id;
    }
    for (auto& stat : *plane.mutable_stats()) {  // world size, rank, window
      if (stat.has_int64_value()) maybe([&](int64_t v) { stat.set_int64_value(v); });
    }
    for (auto& line : *plane.mutable_lines()) {
      maybe([&](int64_t v) { line.set_timestamp_ns(v); });
      maybe([&](int64_t v) { line.set_duration_ps(v); });
      for (auto& event : *line.mutable_events()) {
        maybe([&](int64_t v) { event.set_offset_ps(v); });
        maybe([&](int64_t v) { event.set_duration_ps(v); });
        for (auto& stat : *event.mutable_stats()) {
          if (stat.metadata_id() == dims_id && stat.has_str_value()) {
            const uint64_t r = next();
            if (r % 2 == 0) stat.set_str_value(kDims[(r >> 8) % std::size(kDims)]);
          }
          if (stat.has_int64_value()) maybe([&](int64_t v) { stat.set_int64_value(v); });
          if (stat.has_uint64_value()) {
            maybe([&](int64_t v) { stat.set_uint64_value(static_cast<uint64_t>(v)); });
          }
        }
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto space = neuronprof::exporter::ParseXSpace(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
  if (!space.ok()) return 0;
  ReadAll(*space);
  ApplyExtremes(Fnv1a(data, size) | 1, &*space);
  ReadAll(*space);
  return 0;
}
