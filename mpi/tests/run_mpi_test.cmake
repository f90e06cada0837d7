# Runs one libxal_mpi case under mpirun (see CMakeLists.txt):
# cmake -DMPIEXEC=mpirun -DNP=2 -DPROGRAM=xal_mpi_test -DCASE=name -DFILE=out
#       [-DRECOVERY=1] -P this
# RECOVERY=1 runs mpirun --enable-recovery: a process that dies does not end
# the job, so the survivors run into their timeout.
file(GLOB old "${FILE}.*")
if(old)
  file(REMOVE ${old})
endif()
set(extra)
if(RECOVERY)
  set(extra --enable-recovery)
endif()
execute_process(
  COMMAND ${MPIEXEC} ${extra} --oversubscribe --bind-to none -np ${NP} ${PROGRAM} ${CASE} ${FILE}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 150)
message("${out}${err}")
if(CASE STREQUAL "killed")
  # XAL_MPI_TEST_KILL_MIDWAY (the test's environment): the last process is
  # killed inside its own allreduce of round 1, not before it.
  set(midway FALSE)
  if(DEFINED ENV{XAL_MPI_TEST_KILL_MIDWAY})
    set(midway TRUE)
  endif()
  # The last process kills itself (SIGKILL) while the others are inside an
  # allreduce (3 s timeout). By default Open MPI 4.1's mpirun then ends the
  # whole job (exit 137), survivors included: no hang. With --enable-recovery
  # the job goes on and every survivor must report XAL_ERROR_TIMEOUT.
  if(rc EQUAL 0 AND NOT RECOVERY)
    message(FATAL_ERROR "mpirun exited 0 although a process was killed")
  endif()
  math(EXPR last "${NP} - 1")
  math(EXPR before_last "${NP} - 2")
  foreach(r RANGE 0 ${before_last})
    if(NOT EXISTS "${FILE}.${r}")
      message(FATAL_ERROR "rank ${r} wrote nothing")
    endif()
    file(READ "${FILE}.${r}" seen)
    message("rank ${r}: ${seen}")
    if(NOT seen MATCHES "round 0 status XAL_SUCCESS" OR NOT seen MATCHES "round 1 started")
      message(FATAL_ERROR "rank ${r} did not finish round 0 and start round 1")
    endif()
    if(RECOVERY)
      if(NOT seen MATCHES "round 1 status XAL_ERROR_TIMEOUT after ([0-9.]+) s")
        message(FATAL_ERROR "rank ${r} did not report XAL_ERROR_TIMEOUT")
      endif()
      if(CMAKE_MATCH_1 LESS 2.9 OR CMAKE_MATCH_1 GREATER 60)
        message(FATAL_ERROR "rank ${r}: TIMEOUT after ${CMAKE_MATCH_1} s (configured 3 s)")
      endif()
      if(midway AND CMAKE_MATCH_1 GREATER 15)
        message(FATAL_ERROR "rank ${r}: TIMEOUT after ${CMAKE_MATCH_1} s, past 5 x the 3 s configured")
      endif()
    endif()
  endforeach()
  if(EXISTS "${FILE}.${last}")
    file(READ "${FILE}.${last}" seen)
    if(midway)
      # Killed inside its own collective of round 1: started it, never ended it.
      if(NOT seen MATCHES "round 1 started" OR NOT seen MATCHES "killed with the second collective in flight")
        message(FATAL_ERROR "the killed rank ${last} was not killed inside round 1: ${seen}")
      endif()
      if(seen MATCHES "round 1 status")
        message(FATAL_ERROR "the killed rank ${last} finished round 1: ${seen}")
      endif()
    elseif(seen MATCHES "round 1")
      message(FATAL_ERROR "the killed rank ${last} went on: ${seen}")
    endif()
  elseif(midway)
    message(FATAL_ERROR "the killed rank ${last} wrote nothing")
  endif()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun -np ${NP} ${CASE} failed: ${rc}")
endif()
