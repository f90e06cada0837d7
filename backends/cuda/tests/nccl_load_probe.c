/* nccl_load_probe.c -- a stand-in libnccl.so.2 for one test, not an NCCL:
 * loading it sets XAL_TEST_NCCL_LOADED=1 in the process, so that a test can
 * tell whether the plugin opened "libnccl.so.2" at all (it is closed again
 * before the test can look for it). It has none of NCCL's functions. */
#include <stdlib.h>

__attribute__((constructor)) static void xal_test_nccl_loaded(void) {
  setenv("XAL_TEST_NCCL_LOADED", "1", 1);
}
