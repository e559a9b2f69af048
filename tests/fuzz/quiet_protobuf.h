// Included once by each fuzz target: protobuf logs an error line for every
// string field with invalid UTF-8 it meets while parsing; thousands of
// those a second would drown the fuzzer's own output and slow it down.
// Parse failures still show as a false return; nothing else is logged.
#ifndef NEURONPROF_TESTS_FUZZ_QUIET_PROTOBUF_H_
#define NEURONPROF_TESTS_FUZZ_QUIET_PROTOBUF_H_

#include <google/protobuf/stubs/logging.h>

namespace {
const bool kProtobufQuiet = (google::protobuf::SetLogHandler(nullptr), true);
}  // namespace

#endif  // NEURONPROF_TESTS_FUZZ_QUIET_PROTOBUF_H_
