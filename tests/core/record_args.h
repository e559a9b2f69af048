// Reading a recorded event's arguments back in the recorder tests.
#ifndef NEURONPROF_TESTS_CORE_RECORD_ARGS_H_
#define NEURONPROF_TESTS_CORE_RECORD_ARGS_H_

#include <string>
#include <vector>

#include "src/core/event_args.h"

namespace neuronprof {
namespace testing {

// The int64 argument `key` of `record`, or -1 when it has none.
inline int64_t ArgInt(const internal::EventRecord& record, const std::string& key) {
  std::vector<core::DecodedArg> args;
  core::DecodeArgs(record, &args);
  for (const auto& arg : args) {
    if (std::string(arg.key) == key) return arg.int_value;
  }
  return -1;
}

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_CORE_RECORD_ARGS_H_
