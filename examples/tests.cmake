# Tests that run the examples. Included by examples/CMakeLists.txt.
#
# This file is also the checker those tests run, in script mode:
#   cmake -DEXE=<program> -DEXPECT="regex;regex" [-DEXPECT_RC=n] -P tests.cmake
# It runs EXE, prints its output, and fails unless it exits with EXPECT_RC
# (default 0) and its output matches every EXPECT regex.
if(CMAKE_SCRIPT_MODE_FILE)
  if(NOT DEFINED EXPECT_RC)
    set(EXPECT_RC 0)
  endif()
  execute_process(COMMAND "${EXE}" RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 60)
  message("${out}${err}")
  if(NOT rc STREQUAL "${EXPECT_RC}")
    message(FATAL_ERROR "${EXE} exited with '${rc}', expected '${EXPECT_RC}'")
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

# hello with validation off by another spelling the core accepts (off): it
# must skip the copy past the end, as the core lets it through.
if(XAL_BUILD_TESTS AND TARGET xal_example_hello AND TARGET xal_backend_mock)
  add_test(NAME example_hello_validation_off
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_hello>"
                   "-DEXPECT=pattern OK;validation is off: skipping;hello: OK"
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_hello_validation_off PROPERTIES
    LABELS "examples" TIMEOUT 120
    ENVIRONMENT_MODIFICATION
      "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_mock>;XAL_VALIDATION=set: Off ;XAL_BACKEND_PATH=unset:;XAL_MOCK_DEVICES=unset:;XAL_DEVICE_SELECTOR=unset:;XAL_MEMORY_LIMIT=unset:;XAL_FAULT_PLAN=unset:;XAL_FAULTS=unset:")
endif()

# Failing clean-up calls (injected by the fault backend) are reported, not
# ignored: hello fails, fault_tolerant_training counts and prints them, and
# collectives_check counts them as mismatches.
if(XAL_BUILD_TESTS AND TARGET xal_backend_mock AND TARGET xal_backend_fault)
  set(_xal_fault_env
    "XAL_BACKENDS=set:fault:mock;XAL_MOCK_DEVICES=set:2*a100-40g;XAL_COMM_TIMEOUT_MS=unset:;XAL_BACKEND_PATH=unset:;XAL_DEVICE_SELECTOR=unset:;XAL_MEMORY_LIMIT=unset:;XAL_VALIDATION=unset:;XAL_FAULT_PLAN=unset:;XAL_FAULT_LOG=unset:")
  add_test(NAME example_hello_cleanup_failure
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_hello>"
                   "-DEXPECT=pattern OK;xal_stream_destroy: XAL_ERROR_TIMEOUT" -DEXPECT_RC=1
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_hello_cleanup_failure PROPERTIES
    LABELS "examples;fault" TIMEOUT 60
    ENVIRONMENT_MODIFICATION "${_xal_fault_env};XAL_FAULTS=set:stream_destroy=TIMEOUT")
  add_test(NAME example_fault_tolerant_training_cleanup_failure
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_fault_tolerant_training>"
                   "-DEXPECT=xal_mem_free: XAL_ERROR_TIMEOUT;result=ok"
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_fault_tolerant_training_cleanup_failure PROPERTIES
    LABELS "examples;fault" TIMEOUT 60
    ENVIRONMENT_MODIFICATION "${_xal_fault_env};XAL_FAULTS=set:mem_free=TIMEOUT")
  add_test(NAME example_collectives_check_cleanup_failure
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                   "-DEXPECT=MISMATCH xal_mem_free: XAL_ERROR_TIMEOUT;1 mismatches" -DEXPECT_RC=1
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_collectives_check_cleanup_failure PROPERTIES
    LABELS "examples;fault" TIMEOUT 120
    ENVIRONMENT_MODIFICATION "${_xal_fault_env};XAL_FAULTS=set:mem_free=nth(1)TIMEOUT")
  # One rank's call fails to start while the other's is queued: the check
  # aborts the communicator (rather than wait out its 60 s time-out) and
  # goes on with a new one; only that call is a mismatch.
  add_test(NAME example_collectives_check_rank_failure
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_collectives_check>"
                   "-DEXPECT=rank 1: XAL_ERROR_TIMEOUT;1 mismatches" -DEXPECT_RC=1
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_collectives_check_rank_failure PROPERTIES
    LABELS "examples;fault" TIMEOUT 50
    ENVIRONMENT_MODIFICATION "${_xal_fault_env};XAL_FAULTS=set:allreduce=device(1)nth(1)TIMEOUT")
endif()

# fault_tolerant_training after one rank's allreduce fails (the other
# rank's call stays queued): the example must abort the communicator rather
# than wait out its time-out (300 s by default, left unset here), so the run
# ends well within the test's 30 s.
if(XAL_BUILD_TESTS AND TARGET xal_example_fault_tolerant_training
   AND TARGET xal_backend_mock AND TARGET xal_backend_fault)
  add_test(NAME example_fault_tolerant_training_allreduce_timeout
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_fault_tolerant_training>"
                   "-DEXPECT=injected XAL_ERROR_TIMEOUT into allreduce;result=ok"
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_fault_tolerant_training_allreduce_timeout PROPERTIES
    LABELS "examples;fault" TIMEOUT 30
    ENVIRONMENT_MODIFICATION
      "XAL_BACKENDS=set:fault:mock;XAL_MOCK_DEVICES=set:2*a100-40g;XAL_FAULTS=set:allreduce=device(1)nth(1)TIMEOUT;XAL_COMM_TIMEOUT_MS=unset:;XAL_BACKEND_PATH=unset:;XAL_DEVICE_SELECTOR=unset:;XAL_MEMORY_LIMIT=unset:;XAL_VALIDATION=unset:;XAL_FAULT_PLAN=unset:;XAL_FAULT_LOG=unset:")
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
  xal_unit_test_uses(xal_example_collectives_check xal_backend_mock)
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

# framework_interop: imported memory and streams take an allreduce in place
# (ABI 1.1), on four mixed mock cards.
if(XAL_BUILD_TESTS AND TARGET xal_example_framework_interop AND TARGET xal_backend_mock)
  add_test(NAME example_framework_interop
           COMMAND ${CMAKE_COMMAND} "-DEXE=$<TARGET_FILE:xal_example_framework_interop>"
                   "-DEXPECT=4 device\\(s\\): allreduce in place on imported memory and streams OK"
                   -P "${CMAKE_CURRENT_LIST_FILE}")
  set_tests_properties(example_framework_interop PROPERTIES
    LABELS "examples" TIMEOUT 120
    ENVIRONMENT_MODIFICATION
      "XAL_BACKENDS=set:$<TARGET_FILE:xal_backend_mock>;XAL_BACKEND_PATH=unset:;XAL_MOCK_DEVICES=set:1*a100-40g,1*mi250x,1*intel-max-1550,1*h100-sxm-80g;XAL_DEVICE_SELECTOR=unset:;XAL_MEMORY_LIMIT=unset:;XAL_VALIDATION=unset:;XAL_FAULT_PLAN=unset:;XAL_FAULTS=unset:")
endif()
