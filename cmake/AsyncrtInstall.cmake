# `cmake --install build --prefix DIR`: the runtime's public headers, its
# libraries and a package configuration for find_package(AsyncRT). Only
# runtime libraries are installed: no MLIR, no test libraries, no tools'
# private code.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

get_property(asyncrt_installed_targets GLOBAL
  PROPERTY ASYNCRT_INSTALLED_TARGETS)
install(TARGETS ${asyncrt_installed_targets}
  EXPORT AsyncRTTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

# Runtime headers only: the dialect, converter and compiler headers include
# MLIR and stay in the build.
foreach(dir support host_context device bef bef_executor tensor core_runtime
            kernels backends plugin runtime c)
  install(DIRECTORY include/asyncrt/${dir}
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/asyncrt
    FILES_MATCHING PATTERN "*.h")
endforeach()

set(asyncrt_config_dir ${CMAKE_INSTALL_LIBDIR}/cmake/AsyncRT)
install(EXPORT AsyncRTTargets NAMESPACE AsyncRT::
  DESTINATION ${asyncrt_config_dir})
configure_package_config_file(cmake/AsyncRTConfig.cmake.in
  ${PROJECT_BINARY_DIR}/AsyncRTConfig.cmake
  INSTALL_DESTINATION ${asyncrt_config_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/AsyncRTConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/AsyncRTConfig.cmake
              ${PROJECT_BINARY_DIR}/AsyncRTConfigVersion.cmake
  DESTINATION ${asyncrt_config_dir})
