// The JSON text of both trace writers, taken in memory through the same
// streaming writer the files use (a StringSink instead of gzip + file).
#ifndef NEURONPROF_TESTS_EXPORT_TRACE_TEXT_H_
#define NEURONPROF_TESTS_EXPORT_TRACE_TEXT_H_

#include <string>

#include <catch2/catch.hpp>

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

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_TRACE_TEXT_H_
