// nccl_symbols.h -- the NCCL functions used for native collectives, opened
// with dlopen from libnccl.so.2 (nccl_loader.cpp). X(KIND, name, since):
// KIND REQUIRED (without it NCCL is not used: the core's path) or OPTIONAL
// (without it the feature is left out: without ncclGetLastError, NCCL's
// errors carry no detail beyond ncclGetErrorString); since: the first NCCL with
// it, as major * 10000 + minor * 100 + patch (20700 is 2.7.0; NCCL's own
// codes before 2.9, 2700 for 2.7.0, are read in this encoding). The types
// are nccl.h's declarations.
#pragma once

#include <nccl.h>

#define XAL_NCCL_SYMBOLS(X)                \
  X(REQUIRED, ncclGetVersion, 20304)       \
  X(REQUIRED, ncclGetErrorString, 20000)   \
  X(OPTIONAL, ncclGetLastError, 21304)     \
  X(REQUIRED, ncclCommInitAll, 20000)      \
  X(REQUIRED, ncclCommDestroy, 20000)      \
  X(REQUIRED, ncclCommAbort, 20400)        \
  X(REQUIRED, ncclCommGetAsyncError, 20400) \
  X(REQUIRED, ncclGroupStart, 20000)       \
  X(REQUIRED, ncclGroupEnd, 20000)         \
  X(REQUIRED, ncclAllReduce, 20000)        \
  X(REQUIRED, ncclBroadcast, 20000)        \
  X(REQUIRED, ncclReduce, 20000)           \
  X(REQUIRED, ncclAllGather, 20000)        \
  X(REQUIRED, ncclReduceScatter, 20000)    \
  X(REQUIRED, ncclSend, 20700)             \
  X(REQUIRED, ncclRecv, 20700)
