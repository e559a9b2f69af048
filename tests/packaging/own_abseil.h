// The consumer's own "Abseil": a stand-in with Abseil's names (absl::Status,
// absl::FailedPreconditionError, absl::StrCat) and a layout of its own, as
// an application or plug-in built against another Abseil has. Compiled
// beside neuronprof/trace.h, it would make absl::Status ambiguous if the
// markers headers pulled in any Abseil; linked statically and exported, its
// symbols are the ones an Abseil import of libneuronprof_markers.so would meet.
#ifndef NEURONPROF_TESTS_PACKAGING_OWN_ABSEIL_H_
#define NEURONPROF_TESTS_PACKAGING_OWN_ABSEIL_H_

#include <string>

namespace absl {

class Status {
 public:
  Status() = default;
  Status(int code, std::string message);
  bool ok() const { return code_ == 0; }
  int code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  std::string message_;  // Not Abseil's layout, on purpose.
  int code_ = 0;
};

Status FailedPreconditionError(const std::string& message);
std::string StrCat(const std::string& a, const std::string& b);

}  // namespace absl

#endif  // NEURONPROF_TESTS_PACKAGING_OWN_ABSEIL_H_
