// rccl_symbols.h -- the RCCL functions the backend calls, opened with
// dlopen from librccl.so.1 (rccl_loader.cpp). X(KIND, name, since): KIND
// REQUIRED (without it RCCL is not used: the core's collectives serve the
// HIP devices) or OPTIONAL (the feature it serves is left out; none yet);
// since: the first NCCL API version with it, in NCCL's numbering, which
// RCCL follows (major * 10000 + minor * 100 + patch: 20700 is 2.7.0). The
// types are those of the declarations in rccl_loader.h (RCCL's header is
// not packaged for Debian).
#pragma once

#define XAL_RCCL_SYMBOLS(X)                 \
  X(REQUIRED, ncclGetErrorString, 20000)    \
  X(REQUIRED, ncclCommInitAll, 20000)       \
  X(REQUIRED, ncclCommDestroy, 20000)       \
  X(REQUIRED, ncclCommAbort, 20400)         \
  X(REQUIRED, ncclCommGetAsyncError, 20400) \
  X(REQUIRED, ncclGroupStart, 20000)        \
  X(REQUIRED, ncclGroupEnd, 20000)          \
  X(REQUIRED, ncclAllReduce, 20000)         \
  X(REQUIRED, ncclBroadcast, 20000)         \
  X(REQUIRED, ncclReduce, 20000)            \
  X(REQUIRED, ncclAllGather, 20000)         \
  X(REQUIRED, ncclReduceScatter, 20000)     \
  X(REQUIRED, ncclSend, 20700)              \
  X(REQUIRED, ncclRecv, 20700)
