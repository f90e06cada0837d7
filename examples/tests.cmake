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

# collectives_check: every collective on a mixed set of mock cards (native
# path), and on mock cards with the PoCL device (the core's path for
# communicators that span backends).
if(XAL_BUILD_TESTS AND TARGET xal_example_collectives_check AND TARGET xal_backend_mock)
  set(_xal_cc_env
    "XAL_BACKEND_PATH=unset:;XAL_DEVICE_SELECTOR=unset:;XAL_MEMORY_LIMIT=unset:;XAL_VALIDATION=unset:;XAL_FAULT_PLAN=unset:;XAL_FAULTS=unset:;XAL_COMM_TIMEOUT_MS=unset:")
  add_test(NAME example_collectives_check
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                   "-DEXPECT=3 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_collectives_check PROPERTIES
    LABELS "examples;integration;unit" TIMEOUT 120
    ENVIRONMENT_MODIFICATION
      "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_mock>;XAL_MOCK_DEVICES=set:2*a100-40g,1*mi250x;${_xal_cc_env}")
  if(TARGET xal_backend_opencl AND EXISTS "/etc/OpenCL/vendors/pocl.icd")
    add_test(NAME example_collectives_check_pocl
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=\\[opencl\\];[0-9]+ ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_pocl PROPERTIES
      LABELS "examples;integration;opencl" TIMEOUT 120
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:mock,opencl;XAL_MOCK_DEVICES=set:1*a100-40g,1*mi250x;${_xal_cc_env}")
  endif()
  # Two CUDA devices of the simulated driver (no NCCL) and a mock card, the
  # driver running a context's host functions one at a time as the real one
  # may: the core's host functions wait for each other and must still meet.
  if(TARGET xal_backend_cuda AND TARGET xalsim_cuda)
    add_test(NAME example_collectives_check_cuda_sim
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=\\[cuda\\];\\[mock\\];3 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_cuda_sim PROPERTIES
      LABELS "examples;integration;cuda;simulation" TIMEOUT 180
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_cuda>,$<TARGET_FILE:xal_backend_mock>;XAL_MOCK_DEVICES=set:1*a100-40g;XAL_CUDA_DRIVER=set:$<TARGET_FILE:xalsim_cuda>;XALSIM_CUDA_DEVICES=set:2;XALSIM_CUDA_MEMORY=set:1GiB;XAL_CUDA_NVML=set:off;XALSIM_CUDA_SERIAL_HOST_FUNCS=set:1;XAL_CUDA_HOST_FUNCS=unset:;${_xal_cc_env}")
    # The same with the CUDA plugin's collectives without NCCL: the two CUDA
    # devices are a native group of the core's hierarchical path.
    add_test(NAME example_collectives_check_cuda_sim_peer
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=native groups: cuda \\(2 ranks\\);3 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_cuda_sim_peer PROPERTIES
      LABELS "examples;integration;cuda;simulation" TIMEOUT 180
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_cuda>,$<TARGET_FILE:xal_backend_mock>;XAL_MOCK_DEVICES=set:1*a100-40g;XAL_CUDA_DRIVER=set:$<TARGET_FILE:xalsim_cuda>;XALSIM_CUDA_DEVICES=set:2;XALSIM_CUDA_MEMORY=set:1GiB;XAL_CUDA_NVML=set:off;XALSIM_CUDA_SERIAL_HOST_FUNCS=set:1;XAL_CUDA_HOST_FUNCS=unset:;XAL_CUDA_COLLECTIVES=set:peer;${_xal_cc_env}")
    # Three CUDA devices only: every collective, in place and out of place,
    # on the plugin's own path (uneven allreduce slices).
    add_test(NAME example_collectives_check_cuda_sim_peer_native
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=path 0 \\(native collectives of backend cuda\\);3 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_cuda_sim_peer_native PROPERTIES
      LABELS "examples;integration;cuda;simulation" TIMEOUT 180
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_cuda>;XAL_CUDA_DRIVER=set:$<TARGET_FILE:xalsim_cuda>;XALSIM_CUDA_DEVICES=set:3;XALSIM_CUDA_MEMORY=set:1GiB;XAL_CUDA_NVML=set:off;XAL_CUDA_HOST_FUNCS=unset:;XAL_CUDA_COLLECTIVES=set:peer;${_xal_cc_env}")
  endif()
  # The HIP plugin's RCCL entries on the simulated RCCL: three HIP devices
  # with a mock card (a native group of the core's hierarchical path).
  if(TARGET xal_backend_hip AND TARGET xal_rccl_sim AND TARGET xal_backend_mock)
    add_test(NAME example_collectives_check_hip_sim_rccl
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=native groups: hip \\(3 ranks\\);4 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_hip_sim_rccl PROPERTIES
      LABELS "examples;integration;hip;simulation" TIMEOUT 180
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:hip,$<TARGET_FILE:xal_backend_mock>;XAL_MOCK_DEVICES=set:1*a100-40g;XAL_HIP_LIBRARY=set:$<TARGET_FILE_DIR:xal_hip_sim>/libamdhip64.so.5;XALSIM_HIP_DEVICES=set:3;XAL_RCCL_LIBRARY=set:$<TARGET_FILE:xal_rccl_sim>;${_xal_cc_env}")
  endif()
  # The CUDA plugin's NCCL entries on the simulated NCCL: three CUDA devices
  # alone (native), and two with a mock card (a native group of the core's
  # hierarchical path).
  if(TARGET xal_backend_cuda AND TARGET xalsim_nccl)
    add_test(NAME example_collectives_check_cuda_sim_nccl_native
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=path 0 \\(native collectives of backend cuda\\);3 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_cuda_sim_nccl_native PROPERTIES
      LABELS "examples;integration;cuda;simulation" TIMEOUT 180
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_cuda>;XAL_CUDA_DRIVER=set:$<TARGET_FILE:xalsim_cuda>;XALSIM_CUDA_DEVICES=set:3;XALSIM_CUDA_MEMORY=set:1GiB;XAL_CUDA_NVML=set:off;XAL_CUDA_NCCL=set:$<TARGET_FILE:xalsim_nccl>;${_xal_cc_env}")
    add_test(NAME example_collectives_check_cuda_sim_nccl
             COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                     "-DEXPECT=native groups: cuda \\(2 ranks\\);3 ranks, [0-9]+ checks, 0 mismatches;collectives_check: OK"
                     -P "${CMAKE_CURRENT_LIST_FILE}")
    set_tests_properties(example_collectives_check_cuda_sim_nccl PROPERTIES
      LABELS "examples;integration;cuda;simulation" TIMEOUT 180
      ENVIRONMENT_MODIFICATION
        "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_cuda>,$<TARGET_FILE:xal_backend_mock>;XAL_MOCK_DEVICES=set:1*a100-40g;XAL_CUDA_DRIVER=set:$<TARGET_FILE:xalsim_cuda>;XALSIM_CUDA_DEVICES=set:2;XALSIM_CUDA_MEMORY=set:1GiB;XAL_CUDA_NVML=set:off;XAL_CUDA_NCCL=set:$<TARGET_FILE:xalsim_nccl>;${_xal_cc_env}")
  endif()
endif()
