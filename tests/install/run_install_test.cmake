# Installs the build tree into a scratch prefix, checks the installed files,
# then builds examples/hello.c against the installed tree twice (a CMake
# project using find_package(xal), and cc with pkg-config) and runs both
# with the installed plugins, which libxal must find beside itself.
#
#   cmake -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK_DIR=... -DC_COMPILER=...
#         -DGENERATOR=... -DLIBDIR=lib -DPLUGINDIR=lib/xal [-DEXTRA_FLAGS=...]
#         -P run_install_test.cmake
cmake_minimum_required(VERSION 3.20)

foreach(var BUILD_DIR SOURCE_DIR WORK_DIR C_COMPILER GENERATOR LIBDIR PLUGINDIR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "run_install_test.cmake: -D${var}=... is required")
  endif()
endforeach()

set(prefix "${WORK_DIR}/prefix")
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")

# Runs a command; fails the test with its output unless it exits 0.
# The output is left in ${out_var} when given.
function(run_checked what)
  cmake_parse_arguments(ARG "" "OUTPUT" "COMMAND" ${ARGN})
  execute_process(COMMAND ${ARG_COMMAND} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 300)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: OK")
  if(ARG_OUTPUT)
    set(${ARG_OUTPUT} "${out}${err}" PARENT_SCOPE)
  endif()
endfunction()

# A clean environment for the programs: no variable may point them back at
# the build tree.
set(clean_env "${CMAKE_COMMAND}" -E env
    --unset=XAL_BACKEND_PATH --unset=XAL_DEVICE_SELECTOR
    --unset=XAL_MOCK_DEVICES --unset=XAL_MEMORY_LIMIT --unset=XAL_VALIDATION
    --unset=XAL_FAULT_PLAN --unset=XAL_FAULTS --unset=LD_LIBRARY_PATH)

# Checks what hello printed.
function(check_hello what output)
  foreach(re "pattern OK" "XAL_ERROR_OUT_OF_BOUNDS" "hello: OK")
    if(NOT output MATCHES "${re}")
      message(FATAL_ERROR "${what}: output lacks '${re}':\n${output}")
    endif()
  endforeach()
endfunction()

# 1. Install.
run_checked("cmake --install"
  COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${prefix}")

# 2. The installed files.
file(GLOB plugins "${prefix}/${PLUGINDIR}/libxal_backend_*.so")
foreach(f include/xal/xal.h include/xal/xal_backend.h include/xal/xal_fault.h
          ${LIBDIR}/libxal.so ${LIBDIR}/libxal.so.1
          ${PLUGINDIR}/libxal_backend_mock.so
          ${LIBDIR}/cmake/xal/xalConfig.cmake
          ${LIBDIR}/cmake/xal/xalConfigVersion.cmake
          ${LIBDIR}/cmake/xal/xalTargets.cmake
          ${LIBDIR}/pkgconfig/xal.pc)
  if(NOT EXISTS "${prefix}/${f}")
    message(FATAL_ERROR "not installed: ${prefix}/${f}")
  endif()
endforeach()
message(STATUS "installed files: OK (${prefix}); plugins: ${plugins}")

# 3. hello through find_package(xal).
set(consumer_build "${WORK_DIR}/consumer-build")
run_checked("configure the find_package(xal) consumer"
  COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/tests/install/consumer"
          -B "${consumer_build}" -G "${GENERATOR}"
          "-DCMAKE_C_COMPILER=${C_COMPILER}"
          "-DCMAKE_C_FLAGS=${EXTRA_FLAGS}"
          "-DCMAKE_PREFIX_PATH=${prefix}"
          "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF"
          "-DXAL_HELLO_SOURCE=${SOURCE_DIR}/examples/hello.c")
file(READ "${consumer_build}/CMakeCache.txt" cache)
string(REGEX MATCH "xal_DIR:PATH=([^\n]*)" _ "${cache}")
if(NOT CMAKE_MATCH_1 STREQUAL "${prefix}/${LIBDIR}/cmake/xal")
  message(FATAL_ERROR "find_package(xal) found '${CMAKE_MATCH_1}', "
                      "not the installed package")
endif()
run_checked("build the find_package(xal) consumer"
  COMMAND "${CMAKE_COMMAND}" --build "${consumer_build}")
run_checked("run hello (find_package)" OUTPUT out
  COMMAND ${clean_env} XAL_BACKENDS=mock "${consumer_build}/hello")
check_hello("hello (find_package)" "${out}")

# 4. hello through pkg-config.
find_program(PKG_CONFIG_EXE NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG_EXE)
  message(FATAL_ERROR "pkg-config not found (scripts/deps.sh installs it)")
endif()
set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
run_checked("pkg-config --cflags --libs xal" OUTPUT pc_flags
  COMMAND "${PKG_CONFIG_EXE}" --cflags --libs xal)
string(STRIP "${pc_flags}" pc_flags)
separate_arguments(pc_flags UNIX_COMMAND "${pc_flags}")
separate_arguments(extra UNIX_COMMAND "${EXTRA_FLAGS}")
run_checked("pkg-config --modversion xal" OUTPUT pc_version
  COMMAND "${PKG_CONFIG_EXE}" --modversion xal)
if(NOT pc_version MATCHES "^1\\.")
  message(FATAL_ERROR "xal.pc has version '${pc_version}'")
endif()
run_checked("cc hello.c $(pkg-config --cflags --libs xal)"
  COMMAND "${C_COMPILER}" -std=c99 -Wall -Wextra -pedantic -Werror ${extra}
          "${SOURCE_DIR}/examples/hello.c" ${pc_flags}
          "-Wl,-rpath,${prefix}/${LIBDIR}" -o "${WORK_DIR}/hello-pc")
run_checked("run hello (pkg-config)" OUTPUT out
  COMMAND ${clean_env} XAL_BACKENDS=mock "${WORK_DIR}/hello-pc")
check_hello("hello (pkg-config)" "${out}")

# 5. The installed xal-info, with no XAL_BACKENDS at all: the plugins it
#    lists must come from the installed plugin folder.
if(EXISTS "${prefix}/bin/xal-info")
  run_checked("run the installed xal-info --json" OUTPUT info
    COMMAND ${clean_env} --unset=XAL_BACKENDS "${prefix}/bin/xal-info" --json)
  string(JSON nbackends ERROR_VARIABLE jerr LENGTH "${info}" backends)
  if(jerr)
    message(FATAL_ERROR "xal-info --json: ${jerr}\n${info}")
  endif()
  set(found_mock FALSE)
  math(EXPR last "${nbackends} - 1")
  foreach(i RANGE ${last})
    string(JSON name GET "${info}" backends ${i} name)
    string(JSON path GET "${info}" backends ${i} path)
    string(JSON state GET "${info}" backends ${i} state)
    if(name STREQUAL "mock")
      set(found_mock TRUE)
      get_filename_component(real_path "${path}" REALPATH)
      get_filename_component(real_prefix "${prefix}" REALPATH)
      string(FIND "${real_path}" "${real_prefix}/" at)
      if(NOT state STREQUAL "LOADED" OR NOT at EQUAL 0)
        message(FATAL_ERROR "installed xal-info: mock is ${state} from "
                            "'${path}', expected LOADED from ${prefix}")
      endif()
    endif()
  endforeach()
  if(NOT found_mock)
    message(FATAL_ERROR "installed xal-info lists no mock backend:\n${info}")
  endif()
  message(STATUS "installed xal-info finds the installed plugins: OK")
endif()

# 6. An out-of-tree backend: examples/backend-skeleton, built against the
#    installed package alone, loaded by path, and run through the installed
#    xal-conform: every group passes or reports unsupported (exit 0).
if(DEFINED CXX_COMPILER AND NOT CXX_COMPILER STREQUAL ""
   AND EXISTS "${SOURCE_DIR}/examples/backend-skeleton/CMakeLists.txt")
  set(skeleton_build "${WORK_DIR}/skeleton-build")
  run_checked("configure the out-of-tree backend skeleton"
    COMMAND "${CMAKE_COMMAND}" -S "${SOURCE_DIR}/examples/backend-skeleton"
            -B "${skeleton_build}" -G "${GENERATOR}"
            "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
            "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}"
            "-DCMAKE_MODULE_LINKER_FLAGS=${EXTRA_FLAGS}"
            "-DCMAKE_PREFIX_PATH=${prefix}"
            "-DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF")
  run_checked("build the backend skeleton"
    COMMAND "${CMAKE_COMMAND}" --build "${skeleton_build}")
  set(skeleton "${skeleton_build}/libxal_backend_skeleton.so")
  if(EXISTS "${prefix}/bin/xal-info")
    run_checked("installed xal-info loads the skeleton" OUTPUT info
      COMMAND ${clean_env} "XAL_BACKENDS=${skeleton}" "${prefix}/bin/xal-info" --json)
    if(NOT info MATCHES "\"state\": *\"LOADED\"" OR NOT info MATCHES "Skeleton host device")
      message(FATAL_ERROR "xal-info does not show the skeleton loaded:\n${info}")
    endif()
  endif()
  if(EXISTS "${prefix}/bin/xal-conform")
    run_checked("installed xal-conform on the skeleton" OUTPUT conform
      COMMAND ${clean_env} "XAL_BACKENDS=${skeleton}" "${prefix}/bin/xal-conform"
              --quick --timeout 120 --report "${WORK_DIR}/skeleton-conform.json")
    file(READ "${WORK_DIR}/skeleton-conform.json" report)
    string(JSON failed ERROR_VARIABLE jerr GET "${report}" summary failed)
    if(jerr OR NOT failed EQUAL 0)
      message(FATAL_ERROR "xal-conform on the skeleton: failed=${failed} ${jerr}\n${conform}")
    endif()
  endif()
  message(STATUS "out-of-tree backend skeleton: OK")
endif()

message(STATUS "install test passed")
