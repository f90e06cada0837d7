/* rccl_stand_in.c -- a librccl.so.1 for the RCCL choice tests, not an RCCL:
 * it has RCCL's functions (each fails with ncclInternalError), no mark of
 * the simulated RCCL, so the plugin takes it for a real one, and loading it
 * sets XAL_TEST_RCCL_LOADED=1 in the process so that a test can tell
 * whether the plugin opened it at all. Built with XAL_TEST_RCCL_INCOMPLETE
 * it lacks ncclRecv, as an RCCL too old for the plugin would. */
#include <stddef.h>
#include <stdlib.h>

typedef int ncclResult_t;
typedef struct ncclComm* ncclComm_t;
typedef void* stream_t;

enum { kInternalError = 3 };

__attribute__((constructor)) static void xal_test_rccl_loaded(void) {
  setenv("XAL_TEST_RCCL_LOADED", "1", 1);
}

const char* ncclGetErrorString(ncclResult_t r) {
  (void)r;
  return "stand-in RCCL of the tests";
}
ncclResult_t ncclCommInitAll(ncclComm_t* c, int n, const int* d) {
  (void)c, (void)n, (void)d;
  return kInternalError;
}
ncclResult_t ncclCommDestroy(ncclComm_t c) {
  (void)c;
  return kInternalError;
}
ncclResult_t ncclCommAbort(ncclComm_t c) {
  (void)c;
  return kInternalError;
}
ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t* e) {
  (void)c, (void)e;
  return kInternalError;
}
ncclResult_t ncclGroupStart(void) { return kInternalError; }
ncclResult_t ncclGroupEnd(void) { return kInternalError; }
ncclResult_t ncclAllReduce(const void* s, void* r, size_t n, int t, int o, ncclComm_t c,
                           stream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)o, (void)c, (void)st;
  return kInternalError;
}
ncclResult_t ncclBroadcast(const void* s, void* r, size_t n, int t, int root, ncclComm_t c,
                           stream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)root, (void)c, (void)st;
  return kInternalError;
}
ncclResult_t ncclReduce(const void* s, void* r, size_t n, int t, int o, int root, ncclComm_t c,
                        stream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)o, (void)root, (void)c, (void)st;
  return kInternalError;
}
ncclResult_t ncclAllGather(const void* s, void* r, size_t n, int t, ncclComm_t c, stream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)c, (void)st;
  return kInternalError;
}
ncclResult_t ncclReduceScatter(const void* s, void* r, size_t n, int t, int o, ncclComm_t c,
                               stream_t st) {
  (void)s, (void)r, (void)n, (void)t, (void)o, (void)c, (void)st;
  return kInternalError;
}
ncclResult_t ncclSend(const void* s, size_t n, int t, int peer, ncclComm_t c, stream_t st) {
  (void)s, (void)n, (void)t, (void)peer, (void)c, (void)st;
  return kInternalError;
}
#ifndef XAL_TEST_RCCL_INCOMPLETE
ncclResult_t ncclRecv(void* r, size_t n, int t, int peer, ncclComm_t c, stream_t st) {
  (void)r, (void)n, (void)t, (void)peer, (void)c, (void)st;
  return kInternalError;
}
#endif
