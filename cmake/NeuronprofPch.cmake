# Precompiled headers shared by many targets of one build. Off by default
# under a compiler launcher: ccache does not cache compiles that use a PCH,
# and its hits are faster still.
#
# A PCH is built by a host executable of its own (it is only valid in
# compiles with the same -fPIE/-fPIC, and every user is an executable), with
# the flags its users share. GCC ignores a PCH whose flags do not match
# (-Winvalid-pch says so) and accepts one in users that add -g or defines it
# does not contain; clang needs the same language options, which one build
# shares.
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(pch_default OFF)
else()
  set(pch_default ON)
endif()
option(NEURONPROF_PCH "Precompile the headers shared by many targets" ${pch_default})

# neuronprof_torch_pch(<target>): <target> reuses one precompiled
# <torch/torch.h> (libtorch tests, examples, benchmarks): parsing libtorch's
# headers is about a third of each such compile. Its flags are those all its
# users share: libtorch's, NDEBUG (Debian's libtorch is built with it, and
# its users define it), -pthread, line tables.
function(neuronprof_torch_pch target)
  if(NOT NEURONPROF_PCH)
    return()
  endif()
  if(NOT TARGET neuronprof_torch_pch)
    set(main ${PROJECT_BINARY_DIR}/neuronprof_torch_pch.cc)
    file(WRITE ${main} "int main() { return 0; }\n")
    add_executable(neuronprof_torch_pch EXCLUDE_FROM_ALL ${main})
    target_link_libraries(neuronprof_torch_pch PRIVATE ${TORCH_LIBRARIES})
    target_compile_definitions(neuronprof_torch_pch PRIVATE NDEBUG)
    target_compile_options(neuronprof_torch_pch PRIVATE -pthread
                           $<$<CONFIG:Debug,RelWithDebInfo>:-g1> ${NEURONPROF_TEST_OPTIMIZE})
    target_precompile_headers(neuronprof_torch_pch PRIVATE <torch/torch.h>)
  endif()
  # Replaces the unit tests' PCH (neuronprof_test) where a target had it.
  set_property(TARGET ${target} PROPERTY PRECOMPILE_HEADERS_REUSE_FROM neuronprof_torch_pch)
  add_dependencies(${target} neuronprof_torch_pch)
  # -pthread, NDEBUG and the optimization level must match (clang refuses
  # the PCH otherwise, GCC ignores it). NDEBUG is what libtorch is built
  # with; NEURONPROF_TEST_OPTIMIZE is the tests' (NeuronprofSanitizers.cmake).
  target_compile_options(${target} PRIVATE -pthread ${NEURONPROF_TEST_OPTIMIZE})
  target_compile_definitions(${target} PRIVATE NDEBUG)
endfunction()
