/* nccl_load_probe.c -- a stand-in libnccl.so.2 for the loading tests, not
 * an NCCL: it has none of NCCL's functions (the plugin refuses it), and
 * loading it sets XAL_TEST_NCCL_LOADED=1 in the process, so that a test can
 * tell whether the plugin opened it at all, and whether it stayed loaded. */
#include <stdlib.h>

__attribute__((constructor)) static void xal_test_nccl_loaded(void) {
  setenv("XAL_TEST_NCCL_LOADED", "1", 1);
}
