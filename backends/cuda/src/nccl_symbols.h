// nccl_symbols.h -- the NCCL functions used for native collectives, opened
// with dlopen from libnccl.so.2. X(symbol, return, parameters).
#pragma once

#include <nccl.h>

#define XAL_NCCL_SYMBOLS(X)                                                 \
  X(ncclGetVersion, ncclResult_t, (int*))                                   \
  X(ncclGetErrorString, const char*, (ncclResult_t))                        \
  X(ncclGetLastError, const char*, (ncclComm_t))                            \
  X(ncclCommInitAll, ncclResult_t, (ncclComm_t*, int, const int*))          \
  X(ncclCommDestroy, ncclResult_t, (ncclComm_t))                            \
  X(ncclCommAbort, ncclResult_t, (ncclComm_t))                              \
  X(ncclCommGetAsyncError, ncclResult_t, (ncclComm_t, ncclResult_t*))       \
  X(ncclGroupStart, ncclResult_t, (void))                                   \
  X(ncclGroupEnd, ncclResult_t, (void))                                     \
  X(ncclAllReduce, ncclResult_t,                                            \
    (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,   \
     cudaStream_t))                                                         \
  X(ncclBroadcast, ncclResult_t,                                            \
    (const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,           \
     cudaStream_t))                                                         \
  X(ncclReduce, ncclResult_t,                                               \
    (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, int,          \
     ncclComm_t, cudaStream_t))                                             \
  X(ncclAllGather, ncclResult_t,                                            \
    (const void*, void*, size_t, ncclDataType_t, ncclComm_t, cudaStream_t)) \
  X(ncclReduceScatter, ncclResult_t,                                        \
    (const void*, void*, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,   \
     cudaStream_t))                                                         \
  X(ncclSend, ncclResult_t,                                                 \
    (const void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))   \
  X(ncclRecv, ncclResult_t,                                                 \
    (void*, size_t, ncclDataType_t, int, ncclComm_t, cudaStream_t))
