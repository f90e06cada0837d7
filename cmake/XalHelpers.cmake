# Helpers shared by every part of the build.

# add_subdirectory(DIR) when OPTION is on and DIR has a CMakeLists.txt.
function(xal_optional_subdirectory dir option)
  if(NOT ${option})
    message(STATUS "xal: ${dir} disabled (${option}=OFF)")
  elseif(EXISTS "${CMAKE_CURRENT_SOURCE_DIR}/${dir}/CMakeLists.txt")
    add_subdirectory(${dir})
  endif()
endfunction()

# Applies xal's warning flags to a target.
function(xal_target_warnings target)
  target_compile_options(${target} PRIVATE ${XAL_WARNINGS})
endfunction()

# xal_unit_test_uses(target...)
# Names what a test labelled "unit" runs or loads at run time (its program,
# plugins and simulated drivers it dlopens, tools it starts), for the target
# xal-unit-tests, which builds only what the unit tests need (the sanitizer
# step of scripts/test.sh). Dependencies of a named target (link libraries,
# add_dependencies) are built with it and need not be named. Tests added
# with xal_add_test are named by it.
function(xal_unit_test_uses)
  if(TARGET xal-unit-tests)
    add_dependencies(xal-unit-tests ${ARGN})
  endif()
endfunction()

# xal_add_backend(NAME SOURCES src... [LIBRARIES lib...])
# Builds the plugin libxal_backend_NAME.so into the plugin folder beside
# libxal.so. It exports only xal_backend_get and depends on the public
# headers, never on core/src.
function(xal_add_backend name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBRARIES" ${ARGN})
  set(target xal_backend_${name})
  add_library(${target} MODULE ${ARG_SOURCES})
  set_target_properties(${target} PROPERTIES
    PREFIX "lib"
    OUTPUT_NAME "xal_backend_${name}"
    LIBRARY_OUTPUT_DIRECTORY "${XAL_PLUGIN_OUTPUT_DIR}"
    BUILD_RPATH "$ORIGIN"
    INSTALL_RPATH "$ORIGIN")
  target_link_libraries(${target} PRIVATE xal_headers ${ARG_LIBRARIES})
  target_link_options(${target} PRIVATE
    "-Wl,--version-script=${PROJECT_SOURCE_DIR}/cmake/backend.map"
    "-Wl,--no-undefined")
  xal_target_warnings(${target})
  install(TARGETS ${target} LIBRARY DESTINATION "${XAL_PLUGIN_INSTALL_DIR}")
  # Every plugin: unit tests also load plugins from the plugin folder by
  # name (XAL_BACKENDS=fault:mock), where no target names them.
  xal_unit_test_uses(${target})
endfunction()

# xal_add_test(NAME SOURCES src... [LIBRARIES lib...] [LABELS l...])
# A GoogleTest program registered with CTest under its own name, labelled
# "unit" (built by xal-unit-tests).
function(xal_add_test name)
  cmake_parse_arguments(ARG "" "TIMEOUT" "SOURCES;LIBRARIES;LABELS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBRARIES} GTest::gtest
                        GTest::gtest_main Threads::Threads)
  xal_target_warnings(${name})
  add_test(NAME ${name} COMMAND ${name})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  set_tests_properties(${name} PROPERTIES TIMEOUT ${ARG_TIMEOUT}
                       LABELS "unit;${ARG_LABELS}")
  xal_unit_test_uses(${name})
endfunction()

# xal_add_fault_profile_test(NAME VENDOR vendor [LIBRARIES lib...]
#                            [INCLUDES dir...] [SYSTEM_INCLUDES dir...])
# In a backend's tests folder: checks that the fault backend's VENDOR
# profile (faultinject/profiles/vendor_profiles.cpp) maps every error as the
# backend's own status map (../src/status_map.cpp) does, through
# fault_profile_test.cpp there. Labelled "unit;VENDOR;fault".
function(xal_add_fault_profile_test name)
  cmake_parse_arguments(ARG "" "VENDOR" "LIBRARIES;INCLUDES;SYSTEM_INCLUDES" ${ARGN})
  xal_add_test(${name}
    SOURCES fault_profile_test.cpp ../src/status_map.cpp
            ${PROJECT_SOURCE_DIR}/faultinject/src/profiles.cpp
            ${PROJECT_SOURCE_DIR}/faultinject/profiles/vendor_profiles.cpp
    LIBRARIES xal_common xal_backend_test_support ${ARG_LIBRARIES}
    LABELS "${ARG_VENDOR};fault")
  target_include_directories(${name} PRIVATE ${ARG_INCLUDES} ${PROJECT_SOURCE_DIR}/faultinject/src)
  if(ARG_SYSTEM_INCLUDES)
    target_include_directories(${name} SYSTEM PRIVATE ${ARG_SYSTEM_INCLUDES})
  endif()
endfunction()
