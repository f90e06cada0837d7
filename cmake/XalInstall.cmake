# Install rules of xal, its CMake package (find_package(xal) -> xal::xal)
# and its pkg-config file (xal.pc), plus the test that installs into a
# scratch prefix and builds examples/hello.c against it both ways.
# Included at the end of the top-level CMakeLists.txt.
#
# Installed tree:
#   include/xal/*.h                     public headers
#   lib/libxal.so*                      the library
#   lib/xal/libxal_backend_*.so         plugins (xal_add_backend installs them)
#   bin/                                tools (each tool installs itself)
#   lib/cmake/xal/                      xalConfig.cmake, version, targets
#   lib/pkgconfig/xal.pc
if(NOT TARGET xal)
  message(STATUS "xal: install rules skipped until the core target xal exists")
  return()
endif()

include(CMakePackageConfigHelpers)

set(XAL_CMAKE_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/xal")
set(XAL_PKGCONFIG_INSTALL_DIR "${CMAKE_INSTALL_LIBDIR}/pkgconfig")

# The library and the public-header interface target, exported as
# xal::xal and xal::headers.
set_target_properties(xal_headers PROPERTIES EXPORT_NAME headers)
install(TARGETS xal xal_headers EXPORT xalTargets
  LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}"
  RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}"
  INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")

# Public headers. xal_mpi.h only with its library.
set(xal_public_headers
  "${PROJECT_SOURCE_DIR}/core/include/xal/xal.h"
  "${PROJECT_SOURCE_DIR}/core/include/xal/xal_backend.h"
  "${PROJECT_SOURCE_DIR}/core/include/xal/xal_fault.h"
  "${PROJECT_SOURCE_DIR}/core/include/xal/xal_transport.h")
if(TARGET xal_mpi AND EXISTS "${PROJECT_SOURCE_DIR}/mpi/include/xal/xal_mpi.h")
  list(APPEND xal_public_headers "${PROJECT_SOURCE_DIR}/mpi/include/xal/xal_mpi.h")
endif()
install(FILES ${xal_public_headers}
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/xal")

# CMake package.
install(EXPORT xalTargets NAMESPACE xal::
        DESTINATION "${XAL_CMAKE_INSTALL_DIR}" FILE xalTargets.cmake)
if(TARGET xal_mpi)
  install(EXPORT xalMpiTargets NAMESPACE xal::
          DESTINATION "${XAL_CMAKE_INSTALL_DIR}" FILE xalMpiTargets.cmake)
endif()
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/xalConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/xalConfig.cmake"
  INSTALL_DESTINATION "${XAL_CMAKE_INSTALL_DIR}"
  PATH_VARS XAL_PLUGIN_INSTALL_DIR CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/xalConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMajorVersion)
install(FILES "${PROJECT_BINARY_DIR}/cmake/xalConfig.cmake"
              "${PROJECT_BINARY_DIR}/cmake/xalConfigVersion.cmake"
        DESTINATION "${XAL_CMAKE_INSTALL_DIR}")

# pkg-config, relocatable: paths are relative to the .pc file's folder.
if(IS_ABSOLUTE "${XAL_PKGCONFIG_INSTALL_DIR}")
  set(XAL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH xal_pc_up "/xal/${XAL_PKGCONFIG_INSTALL_DIR}" "/xal")
  string(REGEX REPLACE "/$" "" xal_pc_up "${xal_pc_up}")
  set(XAL_PC_PREFIX "\${pcfiledir}/${xal_pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(XAL_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(XAL_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(XAL_PC_PLUGINDIR "\${prefix}/${XAL_PLUGIN_INSTALL_DIR}")
configure_file("${PROJECT_SOURCE_DIR}/cmake/xal.pc.in"
               "${PROJECT_BINARY_DIR}/cmake/xal.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/cmake/xal.pc"
        DESTINATION "${XAL_PKGCONFIG_INSTALL_DIR}")

# The install test: cmake --install into a scratch prefix, then hello.c
# built with find_package(xal) and with pkg-config, run with the installed
# plugins.
if(XAL_BUILD_TESTS AND TARGET xal_backend_mock
   AND EXISTS "${PROJECT_SOURCE_DIR}/examples/hello.c"
   AND EXISTS "${PROJECT_SOURCE_DIR}/tests/install/run_install_test.cmake")
  set(xal_install_flags "")
  if(XAL_SANITIZE)
    set(xal_install_flags "-fsanitize=${XAL_SANITIZE}")
  endif()
  add_test(NAME install_tree
    COMMAND "${CMAKE_COMMAND}"
      "-DBUILD_DIR=${PROJECT_BINARY_DIR}"
      "-DSOURCE_DIR=${PROJECT_SOURCE_DIR}"
      "-DWORK_DIR=${PROJECT_BINARY_DIR}/install-test"
      "-DC_COMPILER=${CMAKE_C_COMPILER}"
      "-DCXX_COMPILER=${CMAKE_CXX_COMPILER}"
      "-DGENERATOR=${CMAKE_GENERATOR}"
      "-DLIBDIR=${CMAKE_INSTALL_LIBDIR}"
      "-DPLUGINDIR=${XAL_PLUGIN_INSTALL_DIR}"
      "-DEXTRA_FLAGS=${xal_install_flags}"
      -P "${PROJECT_SOURCE_DIR}/tests/install/run_install_test.cmake")
  set_tests_properties(install_tree PROPERTIES LABELS "install" TIMEOUT 600
    RUN_SERIAL TRUE)
endif()
