// Helpers shared by the unit tests.
#ifndef NEURONPROF_TESTS_TEST_UTIL_H_
#define NEURONPROF_TESTS_TEST_UTIL_H_

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "proto/xplane.pb.h"
#include "src/export/atomic_file.h"
#include "src/export/xspace_file.h"

namespace neuronprof {
namespace testing {

// Sets environment variables for one test and restores them after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    had_ = getenv(name) != nullptr;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

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

// Reads an .xplane.pb; an unreadable file or one that is not an XSpace
// fails the test with the path and the reason (never an empty XSpace).
// The entries of a folder, sorted, without "." and ".."; empty if it
// cannot be opened.
inline std::vector<std::string> ListDir(const std::string& path) {
  std::vector<std::string> names;
  if (DIR* dir = opendir(path.c_str())) {
    while (dirent* entry = readdir(dir)) {
      const std::string name = entry->d_name;
      if (name != "." && name != "..") names.push_back(name);
    }
    closedir(dir);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Holds the threads that call Enter() until Release(), so a test can act
// while another thread is inside some step (collecting, writing, a
// callback) without sleeping.
class ThreadGate {
 public:
  void Enter() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++entered_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return released_; });
  }
  // True once `count` threads have entered; false if not within a minute.
  bool WaitEntered(int count = 1) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, std::chrono::minutes(1), [&] { return entered_ >= count; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int entered_ = 0;
  bool released_ = false;
};

// Lets a ThreadGate go when the scope ends, even when an assertion left early.
struct ReleaseAtExit {
  ThreadGate& gate;
  ~ReleaseAtExit() { gate.Release(); }
};

inline tensorflow::profiler::XSpace ReadXSpace(const std::string& path) {
  auto space = exporter::ReadXSpaceFile(path);
  if (!space.ok()) FAIL("cannot read the XSpace " << path << ": " << space.status().ToString());
  return std::move(*space);
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_TEST_UTIL_H_
