// Helpers shared by the unit tests.
#ifndef NEURONPROF_TESTS_TEST_UTIL_H_
#define NEURONPROF_TESTS_TEST_UTIL_H_

#include <stdlib.h>

#include <string>

#include "proto/xplane.pb.h"
#include "src/export/atomic_file.h"

namespace neuronprof {
namespace testing {

// A fresh directory under $TMPDIR, removed when the object goes.
class TempDir {
 public:
  TempDir() {
    const char* tmp = getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/neuronprof_test_XXXXXX";
    path_ = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() { exporter::RemoveTree(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline tensorflow::profiler::XSpace ReadXSpace(const std::string& path) {
  tensorflow::profiler::XSpace space;
  auto data = exporter::ReadFile(path);
  if (data.ok()) space.ParseFromString(*data);
  return space;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_TEST_UTIL_H_
