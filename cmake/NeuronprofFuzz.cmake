# NEURONPROF_FUZZ=ON (clang only): the ASan/UBSan configuration that also
# links the tests/fuzz targets with libFuzzer. Everything is built as
# usual, instrumented for coverage too, so one build serves both the unit
# tests under ASan/UBSan and the fuzzers (scripts/test.sh, stage 3).
# NEURONPROF_SANITIZE defaults to address,undefined here.
option(NEURONPROF_FUZZ "Link the tests/fuzz targets with libFuzzer (needs clang)" OFF)
if(NEURONPROF_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NEURONPROF_FUZZ=ON needs clang (-DCMAKE_CXX_COMPILER=clang++-14); "
                        "with gcc the fuzz targets replay their corpus as ctest tests")
  endif()
  if(NOT NEURONPROF_SANITIZE)
    set(NEURONPROF_SANITIZE address,undefined)
  elseif(NOT NEURONPROF_SANITIZE STREQUAL "address,undefined")
    message(FATAL_ERROR "NEURONPROF_FUZZ=ON runs under address,undefined, not ${NEURONPROF_SANITIZE}")
  endif()
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
