#include "src/analysis/markers/serving_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include "src/xplane/saturating.h"
#include "src/xplane/schema.h"
#include "src/xplane/xplane_visitor.h"

namespace neuronprof {
namespace analysis {
namespace {

struct Sample {
  int64_t ps = 0;
  double value = 0;
};

double ValueOf(const xplane::StatVisitor& stat) {
  if (stat.raw().value_case() == tensorflow::profiler::XStat::kDoubleValue) {
    return stat.raw().double_value();
  }
  if (stat.raw().value_case() == tensorflow::profiler::XStat::kUint64Value) {
    return static_cast<double>(stat.raw().uint64_value());
  }
  return static_cast<double>(stat.IntValue().value_or(0));
}

CounterStats Summarize(std::string name, std::vector<Sample>& samples, int64_t begin_ps,
                       int64_t end_ps) {
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.ps < b.ps; });
  CounterStats out;
  out.name = std::move(name);
  out.samples = static_cast<int64_t>(samples.size());
  // NaN is no value: such samples are counted, and left out of the figures
  // (their time too), which stay NaN (unknown) when no sample is a number.
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  out.min = std::numeric_limits<double>::infinity();
  out.max = -out.min;
  double sum = 0, weighted = 0, weight = 0, last_number = kUnknown;
  for (size_t i = 0; i < samples.size(); ++i) {
    const double v = samples[i].value;
    if (std::isnan(v)) {
      ++out.nan_samples;
      continue;
    }
    last_number = v;
    out.min = std::min(out.min, v);
    out.max = std::max(out.max, v);
    sum += v;
    const int64_t until =
        i + 1 < samples.size() ? samples[i + 1].ps : std::max(end_ps, samples[i].ps);
    const double held = static_cast<double>(SaturatingSub(until, samples[i].ps));
    weighted += v * held;
    weight += held;
  }
  const int64_t numbers = out.samples - out.nan_samples;
  out.last = samples.back().value;
  if (numbers == 0) {
    out.min = out.max = out.mean = out.time_weighted_mean = kUnknown;
  } else {
    out.mean = sum / static_cast<double>(numbers);
    out.time_weighted_mean = weight > 0 ? weighted / weight : last_number;
  }
  out.first_ps = SaturatingSub(samples.front().ps, begin_ps);
  out.last_ps = SaturatingSub(samples.back().ps, begin_ps);
  out.end_ps = SaturatingSub(std::max(end_ps, samples.back().ps), begin_ps);
  return out;
}

}  // namespace

ServingEvents BuildServingEvents(const tensorflow::profiler::XSpace& space) {
  std::map<std::string, std::vector<Sample>> counters;
  std::map<std::string, int64_t> instants;
  int64_t begin_ps = std::numeric_limits<int64_t>::max();
  int64_t end_ps = std::numeric_limits<int64_t>::min();
  for (const auto& raw : space.planes()) {
    if (!xplane::IsHostPlane(raw)) continue;
    const xplane::PlaneVisitor plane(raw);
    const int64_t value_id = plane.StatId(xplane::kCounterValueStat);
    const int64_t instant_id = plane.StatId(xplane::kInstantStat);
    // A TraceBatchConsumer's links are instants with a consumer id: arrows,
    // not the user's instants.
    const int64_t link_id = plane.StatId(xplane::kConsumerIdStat);
    plane.ForEachLine([&](const xplane::LineVisitor& line) {
      const bool counter_line = xplane::IsCounterLine(line.Name());
      const int64_t line_ps = LineStartPs(line.TimestampNs());
      line.ForEachEvent([&](const xplane::EventVisitor& event) {
        const int64_t start = SaturatingAdd(line_ps, event.OffsetPs());
        begin_ps = std::min(begin_ps, start);
        end_ps = std::max(end_ps, SaturatingAdd(start, std::max<int64_t>(0, event.DurationPs())));
        if (counter_line) {
          if (const auto stat = event.Stat(value_id)) {
            counters[std::string(event.Name())].push_back({start, ValueOf(*stat)});
          }
          return;
        }
        const auto* metadata = event.Metadata();
        if (metadata == nullptr || instant_id < 0 || event.Stat(link_id)) return;
        for (const auto& stat : metadata->stats()) {
          if (stat.metadata_id() == instant_id) ++instants[std::string(event.Name())];
        }
      });
    });
  }
  ServingEvents out;
  for (auto& [name, samples] : counters) {
    out.counters.push_back(Summarize(name, samples, begin_ps, end_ps));
  }
  for (const auto& [name, count] : instants) out.instants.push_back({name, count});
  std::stable_sort(out.instants.begin(), out.instants.end(),
                   [](const InstantCount& a, const InstantCount& b) { return a.count > b.count; });
  return out;
}

}  // namespace analysis
}  // namespace neuronprof
