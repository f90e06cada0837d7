# Tests that run the examples. Included by examples/CMakeLists.txt.
#
# This file is also the checker those tests run, in script mode:
#   cmake -DEXE=<program> -DEXPECT="regex;regex" -P tests.cmake
# It runs EXE, prints its output, and fails unless it exits 0 and its output
# matches every EXPECT regex.
if(CMAKE_SCRIPT_MODE_FILE)
  execute_process(COMMAND "${EXE}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  message("${out}${err}")
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${EXE} exited with '${rc}'")
  endif()
  foreach(re IN LISTS EXPECT)
    if(NOT "${out}${err}" MATCHES "${re}")
      message(FATAL_ERROR "output of ${EXE} does not match '${re}'")
    endif()
  endforeach()
  return()
endif()

if(XAL_BUILD_TESTS AND TARGET xal_example_hello AND TARGET xal_backend_mock)
  add_test(NAME example_hello
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_hello>"
                   "-DEXPECT=2 device\\(s\\);pattern OK;XAL_ERROR_OUT_OF_BOUNDS;hello: OK"
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_hello PROPERTIES
    LABELS "examples" TIMEOUT 120
    ENVIRONMENT_MODIFICATION
      "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_mock>;XAL_BACKEND_PATH=unset:;XAL_MOCK_DEVICES=unset:;XAL_DEVICE_SELECTOR=unset:;XAL_MEMORY_LIMIT=unset:;XAL_VALIDATION=unset:;XAL_FAULT_PLAN=unset:;XAL_FAULTS=unset:")
endif()
