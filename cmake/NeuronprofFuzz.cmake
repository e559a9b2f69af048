# NEURONPROF_FUZZ=ON: a separate configuration, with clang
# (-DCMAKE_CXX_COMPILER=clang++-14), that builds the library and the
# libFuzzer targets of tests/fuzz only, everything instrumented for
# coverage and under ASan+UBSan. scripts/test.sh runs each for a bounded
# time; scripts/fuzz.sh runs them by hand.
option(NEURONPROF_FUZZ "Build only the libFuzzer targets (needs clang)" OFF)
if(NEURONPROF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NEURONPROF_FUZZ=ON needs clang (-DCMAKE_CXX_COMPILER=clang++-14); "
                        "with gcc the fuzz targets replay their corpus as ctest tests")
  endif()
  if(NEURONPROF_SANITIZE)
    message(FATAL_ERROR "NEURONPROF_FUZZ=ON sets its own sanitizers; leave NEURONPROF_SANITIZE empty")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
  # Optional collectors are not what the fuzzers read.
  set(NEURONPROF_WITH_TORCH OFF)
  set(NEURONPROF_WITH_CUPTI OFF)
endif()
