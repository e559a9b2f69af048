# Install rules and the package config used by find_package(neuronprof CONFIG).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS neuronprof neuronprof_proto neuronprof_rpc_proto neuronprof_cli
  EXPORT neuronprofTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/neuronprof
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT neuronprofTargets
  NAMESPACE neuronprof::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/neuronprof)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/neuronprofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/neuronprofConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/neuronprof)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/neuronprofConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/neuronprofConfig.cmake
  ${PROJECT_BINARY_DIR}/neuronprofConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/neuronprof)
