// A full disk without mounting one: RLIMIT_FSIZE caps every file this
// process writes, and with SIGXFSZ ignored a write past the cap fails with
// EFBIG, as a write to a full disk fails with ENOSPC.
#ifndef NEURONPROF_TESTS_EXPORT_FILE_SIZE_LIMIT_H_
#define NEURONPROF_TESTS_EXPORT_FILE_SIZE_LIMIT_H_

#include <signal.h>
#include <sys/resource.h>

#include <catch2/catch.hpp>

namespace neuronprof {
namespace testing {

class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(rlim_t bytes) {
    REQUIRE(getrlimit(RLIMIT_FSIZE, &saved_) == 0);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    rlimit limit = saved_;
    limit.rlim_cur = bytes;
    REQUIRE(setrlimit(RLIMIT_FSIZE, &limit) == 0);
  }
  ~ScopedFileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    signal(SIGXFSZ, old_handler_);
  }
  ScopedFileSizeLimit(const ScopedFileSizeLimit&) = delete;
  ScopedFileSizeLimit& operator=(const ScopedFileSizeLimit&) = delete;

 private:
  rlimit saved_{};
  sighandler_t old_handler_ = SIG_DFL;
};

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_EXPORT_FILE_SIZE_LIMIT_H_
