# cmake -DINPUT=in.ptx -DOUTPUT=out.ptx -DISA=7.0 -DARCH=sm_80 -DPTXAS=ptxas
#       -P compat_ptx.cmake
# Writes INPUT with its ".version" lowered to ISA, so that drivers older
# than the toolkit can JIT it (a driver refuses PTX of an ISA newer than
# itself: CUDA_ERROR_UNSUPPORTED_PTX_VERSION). ptxas checks the result for
# ARCH: an instruction that needs a newer ISA fails there, at build time,
# and then the PTX is kept at the toolkit's ISA, with a warning.
file(READ "${INPUT}" text)
string(REGEX MATCH "\n\\.version [0-9]+\\.[0-9]+" found "${text}")
if(NOT found)
  message(FATAL_ERROR "compat_ptx: no .version line in ${INPUT}")
endif()
string(REGEX REPLACE "\n\\.version [0-9]+\\.[0-9]+" "\n.version ${ISA}" lowered
       "${text}")
file(WRITE "${OUTPUT}.tmp" "${lowered}")
execute_process(
  COMMAND "${PTXAS}" "-arch=${ARCH}" "${OUTPUT}.tmp" -o "${OUTPUT}.cubin"
  RESULT_VARIABLE rc
  ERROR_VARIABLE err
  OUTPUT_QUIET)
file(REMOVE "${OUTPUT}.cubin")
if(rc EQUAL 0)
  file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
else()
  file(REMOVE "${OUTPUT}.tmp")
  string(STRIP "${found}" found)
  message(WARNING "compat_ptx: ${INPUT} does not assemble as PTX ISA ${ISA} "
                  "for ${ARCH}; keeping ${found} (drivers older than the "
                  "toolkit will not JIT it):\n${err}")
  file(WRITE "${OUTPUT}" "${text}")
endif()
