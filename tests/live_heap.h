// The bytes that operator new has handed out and delete not yet taken back,
// in the whole process (every thread): a test links tests/live_heap.cc, which
// replaces the global operator new and delete (under ASan or TSan it asks the
// sanitizer's allocator instead), to check by counting that something holds
// no memory per item it handles.
#ifndef NEURONPROF_TESTS_LIVE_HEAP_H_
#define NEURONPROF_TESTS_LIVE_HEAP_H_

#include <cstdint>

namespace neuronprof {
namespace testing {

int64_t LiveHeapBytes();

}  // namespace testing
}  // namespace neuronprof

#endif  // NEURONPROF_TESTS_LIVE_HEAP_H_
