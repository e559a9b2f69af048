// The JSON text of both trace writers, taken in memory through the same
// streaming writer the files use (a StringSink instead of gzip + file).
#ifndef NEURONPROF_TESTS_EXPORT_TRACE_TEXT_H_
#define NEURONPROF_TESTS_EXPORT_TRACE_TEXT_H_

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/export/byte_sink.h"
#include "src/export/chrome_trace.h"
#include "src/export/kineto_trace.h"

namespace neuronprof {
namespace testing {

inline std::string ChromeTraceText(const tensorflow::profiler::XSpace& space) {
  exporter::StringSink sink;
  REQUIRE(exporter::WriteChromeTrace(space, &sink).ok());
  return sink.text();
}

inline std::string KinetoTraceText(const tensorflow::profiler::XSpace& space) {
  exporter::StringSink sink;
  REQUIRE(exporter::WriteKinetoTrace(space, &sink).ok());
  return sink.text();
}

// A trace's lines (one event each in both writers), sorted, each without
// its separating comma: the same events whatever their order (a trace
// written from fragments lists them fragment after fragment).
inline std::vector<std::string> SortedTraceLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line.back() == ',') line.pop_back();
    lines.push_back(std::move(line));
    at = end + 1;
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_TRACE_TEXT_H_
