# Install rules and the package config used by find_package(neuronprof CONFIG).
# One export set per component, so a consumer of neuronprof::markers alone
# loads no other target and no third-party package:
#   neuronprofMarkersTargets  neuronprof::markers
#   neuronprofTargets         neuronprof::neuronprof
#   neuronprofTorchTargets    neuronprof::torch (built with libtorch)
#   neuronprofCuptiTargets    neuronprof::cupti (built with CUPTI)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(NEURONPROF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/neuronprof)

# neuronprof_install_component(<export set> <target>...)
function(neuronprof_install_component export_set)
  install(TARGETS ${ARGN}
    EXPORT ${export_set}
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
    INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT ${export_set}
    NAMESPACE neuronprof::
    DESTINATION ${NEURONPROF_CMAKE_DIR})
endfunction()

neuronprof_install_component(neuronprofMarkersTargets neuronprof_markers)
if(NEURONPROF_LIBRARY_TYPE STREQUAL "STATIC")
  # A static libneuronprof.a leaves its generated protos to the consumer's link.
  neuronprof_install_component(neuronprofTargets
    neuronprof neuronprof_proto neuronprof_rpc_proto)
else()
  neuronprof_install_component(neuronprofTargets neuronprof)
endif()
set(NEURONPROF_INSTALLED_COMPONENTS markers)
if(TARGET neuronprof_torch)
  neuronprof_install_component(neuronprofTorchTargets neuronprof_torch)
  list(APPEND NEURONPROF_INSTALLED_COMPONENTS torch)
endif()
if(TARGET neuronprof_cupti)
  neuronprof_install_component(neuronprofCuptiTargets neuronprof_cupti)
  list(APPEND NEURONPROF_INSTALLED_COMPONENTS cupti)
endif()

install(TARGETS neuronprof_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/neuronprof
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/neuronprofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/neuronprofConfig.cmake
  INSTALL_DESTINATION ${NEURONPROF_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/neuronprofConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/neuronprofConfig.cmake
  ${PROJECT_BINARY_DIR}/neuronprofConfigVersion.cmake
  DESTINATION ${NEURONPROF_CMAKE_DIR})
