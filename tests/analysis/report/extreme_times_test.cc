// A crafted .xplane.pb can hold any int64 time or duration: the summary
// analysis clamps instead of overflowing (signed overflow is undefined
// behaviour; the ASan/UBSan build runs these with halt_on_error), and says
// how many events it clamped.
#include <catch2/catch.hpp>
#include <chrono>
#include <limits>

#include "src/analysis/ops/op_table.h"
#include "src/analysis/ops/operator_events.h"
#include "src/analysis/ops/step_breakdown.h"
#include "src/analysis/report/summary.h"
#include "src/analysis/report/summary_sections.h"
#include "src/xplane/saturating.h"
#include "tests/analysis/operator_space.h"

namespace neuronprof {
namespace analysis {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

TEST_CASE("saturating arithmetic clamps at the int64 ends") {
  CHECK(SaturatingAdd(kMax, 1) == kMax);
  CHECK(SaturatingAdd(kMin, -1) == kMin);
  CHECK(SaturatingAdd(5, -7) == -2);
  CHECK(SaturatingSub(kMin, 1) == kMin);
  CHECK(SaturatingSub(kMax, -1) == kMax);
  CHECK(SaturatingSub(0, kMin) == kMax);
  CHECK(SaturatingMul(kMax, 2) == kMax);
  CHECK(SaturatingMul(kMin, 2) == kMin);
  CHECK(SaturatingMul(kMin, -1) == kMax);
  CHECK(LineStartPs(kMax / 1000 + 1) == kMax);
  CHECK(LineStartPs(-3) == -3000);
  CHECK(EventTimesFit(1, 2, 3));
  CHECK_FALSE(EventTimesFit(kMax, 0, 0));
  CHECK_FALSE(EventTimesFit(0, kMax, 1));
  CHECK_FALSE(EventTimesFit(0, kMin, -1));
}

TEST_CASE("Checked formulas say when any step overflowed; negation saturates") {
  CHECK((Checked(3) * 4 + 5).value() == 17);
  CHECK((Checked(3) * 4 + 5).ok());
  CHECK_FALSE((Checked(int64_t{1} << 62) * 4 * 0).ok());  // Not cured by a later 0.
  CHECK_FALSE((0 * Checked(int64_t{1} << 62) + kMax + 1).ok());
  CHECK((0 * Checked(int64_t{1} << 62) * (int64_t{1} << 62)).ok());
  CHECK_FALSE((Checked(kMin) - 1).ok());
  CHECK(SaturatingNeg(kMin) == kMax);
  CHECK(SaturatingNeg(kMax) == kMin + 1);
}

TEST_CASE("a deadline past what steady_clock counts is never, not the past") {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  CHECK(SaturatingTimeAfter(now, 1500) == now + std::chrono::milliseconds(1500));
  // issue 27: now + milliseconds(INT64_MAX - 1) overflowed into the past, and
  // a Profiler's window closed at once with no events.
  CHECK(SaturatingTimeAfter(now, kMax - 1) == Clock::time_point::max());
  CHECK(SaturatingTimeAfter(now, kMax / 1000000) == Clock::time_point::max());
  CHECK(SaturatingTimeAfter(now, 0) == now);
}

// Every line's start, or every event's offset or duration, at an extreme.
enum class Field { kLineStart, kOffset, kDuration };

tensorflow::profiler::XSpace WithExtremes(Field field, int64_t value) {
  auto space = testing::MakeOperatorSpace(2, true);
  for (auto& plane : *space.mutable_planes()) {
    for (auto& line : *plane.mutable_lines()) {
      if (field == Field::kLineStart) line.set_timestamp_ns(value);
      for (auto& event : *line.mutable_events()) {
        if (field == Field::kOffset) event.set_offset_ps(value);
        if (field == Field::kDuration) event.set_duration_ps(value);
      }
    }
  }
  return space;
}

TEST_CASE("extreme times and durations are clamped, counted and reported, never overflow") {
  // A start of INT64_MIN or a duration of INT64_MIN still fits on its own
  // (nothing to clamp); the analysis must not overflow on it either (step
  // windows, sweeps and idle time subtract from it).
  const struct {
    Field field;
    int64_t value;
    bool clamps;
  } cases[] = {{Field::kLineStart, kMax, true}, {Field::kLineStart, kMin, true},
               {Field::kOffset, kMax, true},    {Field::kOffset, kMin, false},
               {Field::kDuration, kMax, true},  {Field::kDuration, kMin, false}};
  for (const auto& c : cases) {
    CAPTURE(static_cast<int>(c.field), c.value);
    const auto space = WithExtremes(c.field, c.value);
    const Summary summary = Summarize(space);
    CHECK((summary.clamped_events > 0) == c.clamps);
    const std::string text = FormatSummaryText(summary, 0);
    CHECK((text.find("times were clamped") != std::string::npos) == c.clamps);
    CHECK_FALSE(FormatOpTableCsv(summary.table).empty());
    for (const StepBreakdown& step : summary.steps) {
      // Each category's time lies inside the (clamped) step window.
      for (int64_t part : {step.forward_ps, step.backward_ps, step.other_ops_ps, step.markers_ps,
                           step.device_busy_ps}) {
        CHECK(part >= 0);
      }
    }
  }
}

TEST_CASE("sums of huge durations saturate instead of wrapping negative") {
  const auto space = WithExtremes(Field::kDuration, kMax);
  const Summary summary = Summarize(space);
  REQUIRE_FALSE(summary.table.rows.empty());
  for (const OpTableRow& row : summary.table.rows) CHECK(row.total_ps == kMax);
  REQUIRE(summary.steps.size() == 2);
  // Each step reaches the end of time: the breakdown saturates, the idle
  // time never goes negative by wrapping.
  for (const StepBreakdown& step : summary.steps) {
    CHECK(step.duration_ps == kMax);
    CHECK(step.idle_ps >= 0);
  }
  CHECK(summary.table.total_self_ps >= 0);
  CHECK(summary.clamped_events > 0);
}

TEST_CASE("a normal capture clamps nothing and prints no warning") {
  const Summary summary = Summarize(testing::MakeOperatorSpace(2, true));
  CHECK(summary.clamped_events == 0);
  CHECK(FormatSummaryText(summary, 0).find("clamped") == std::string::npos);
}

}  // namespace
}  // namespace analysis
}  // namespace neuronprof
