// Which sanitizer this build runs under, one spelling for GCC
// (__SANITIZE_ADDRESS__, __SANITIZE_THREAD__) and clang (__has_feature):
// macros (0 or 1) for #if, constants for code. Here, at the bottom of the
// module table, so that every module and test can include it; in namespace
// neuronprof for the same reason.
#ifndef NEURONPROF_SRC_XPLANE_SANITIZERS_H_
#define NEURONPROF_SRC_XPLANE_SANITIZERS_H_

#if defined(__has_feature)
#define NEURONPROF_HAS_FEATURE(x) __has_feature(x)
#else
#define NEURONPROF_HAS_FEATURE(x) 0
#endif

// AddressSanitizer (its LeakSanitizer included).
#if defined(__SANITIZE_ADDRESS__) || NEURONPROF_HAS_FEATURE(address_sanitizer)
#define NEURONPROF_ASAN 1
#else
#define NEURONPROF_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__) || NEURONPROF_HAS_FEATURE(thread_sanitizer)
#define NEURONPROF_TSAN 1
#else
#define NEURONPROF_TSAN 0
#endif

// ThreadSanitizer of GCC's runtime (not clang's).
#if NEURONPROF_TSAN && !defined(__clang__)
#define NEURONPROF_GCC_TSAN 1
#else
#define NEURONPROF_GCC_TSAN 0
#endif

// A sanitizer whose allocator owns malloc and new (ASan, TSan, clang's MSan):
// it keeps freed blocks, counts live bytes itself, and no trim reaches it.
#if NEURONPROF_ASAN || NEURONPROF_TSAN || NEURONPROF_HAS_FEATURE(memory_sanitizer)
#define NEURONPROF_SANITIZER_ALLOCATOR 1
#else
#define NEURONPROF_SANITIZER_ALLOCATOR 0
#endif

namespace neuronprof {

inline constexpr bool kAddressSanitizer = NEURONPROF_ASAN;
inline constexpr bool kThreadSanitizer = NEURONPROF_TSAN;
inline constexpr bool kSanitizerAllocator = NEURONPROF_SANITIZER_ALLOCATOR;

}  // namespace neuronprof

#endif  // NEURONPROF_SRC_XPLANE_SANITIZERS_H_
