# One precompiled <torch/torch.h> for every target of this build that
# includes it (libtorch tests, examples, benchmarks): parsing libtorch's
# headers is about a third of each such compile. Off by default under a
# compiler launcher: ccache does not cache compiles that use a PCH, and its
# hits are faster still.
#
# neuronprof_torch_pch(<target>) makes <target> reuse it. The header is built
# by an executable of its own (a PCH is only valid in compiles with the same
# -fPIE/-fPIC, and every user is an executable), with the flags that all its
# users share: libtorch's, NDEBUG (Debian's libtorch is built with it, and
# its users define it), -pthread, line tables. GCC accepts it in users that add -g or
# defines it does not contain and otherwise ignores it (-Winvalid-pch says
# so); clang needs the same language options, which one build shares.
if(CMAKE_CXX_COMPILER_LAUNCHER)
  set(pch_default OFF)
else()
  set(pch_default ON)
endif()
option(NEURONPROF_TORCH_PCH "Precompile <torch/torch.h> once for its users" ${pch_default})

function(neuronprof_torch_pch target)
  if(NOT NEURONPROF_TORCH_PCH)
    return()
  endif()
  if(NOT TARGET neuronprof_torch_pch)
    set(main ${PROJECT_BINARY_DIR}/neuronprof_torch_pch.cc)
    file(WRITE ${main} "int main() { return 0; }\n")
    add_executable(neuronprof_torch_pch EXCLUDE_FROM_ALL ${main})
    target_link_libraries(neuronprof_torch_pch PRIVATE ${TORCH_LIBRARIES})
    target_compile_definitions(neuronprof_torch_pch PRIVATE NDEBUG)
    target_compile_options(neuronprof_torch_pch PRIVATE -pthread
                           $<$<CONFIG:Debug,RelWithDebInfo>:-g1>)
    target_precompile_headers(neuronprof_torch_pch PRIVATE <torch/torch.h>)
  endif()
  target_precompile_headers(${target} REUSE_FROM neuronprof_torch_pch)
  # -pthread and NDEBUG must match (clang refuses the PCH otherwise, GCC
  # ignores it). NDEBUG is what libtorch is built with.
  target_compile_options(${target} PRIVATE -pthread)
  target_compile_definitions(${target} PRIVATE NDEBUG)
endfunction()
