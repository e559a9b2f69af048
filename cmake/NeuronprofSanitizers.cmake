# Applies NEURONPROF_SANITIZE to every target defined after this point.
if(NEURONPROF_SANITIZE)
  message(STATUS "neuronprof: building with -fsanitize=${NEURONPROF_SANITIZE}")
  add_compile_options(-fsanitize=${NEURONPROF_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${NEURONPROF_SANITIZE})
  if(NEURONPROF_SANITIZE MATCHES "thread")
    # The recorder's full-fence fallback (no membarrier) is a fence TSan
    # cannot model; the membarrier path it takes here needs none.
    add_compile_options(-Wno-tsan)
  endif()
endif()

# The unit tests' own code (tests/CMakeLists.txt) and the PCHs they share
# are compiled at -O0 in the sanitizer builds: half of clang's -O1
# ASan/UBSan compile of a test, while the library keeps the build's flags.
set(NEURONPROF_TEST_OPTIMIZE "")
if(NEURONPROF_SANITIZE)
  set(NEURONPROF_TEST_OPTIMIZE -O0)
endif()
