// RCCL (the ROCm collective library), loaded with dlopen when present.
// RCCL's headers are not packaged for Debian, so the few types used are
// declared here from RCCL's documented C ABI (the same as NCCL's).
#pragma once

#include <cstddef>
#include <string>

#include "hip_api.h"

namespace xal::hip {

using ncclResult_t = int;  // 0: ncclSuccess
using ncclComm_t = struct ncclComm*;
using ncclDataType_t = int;
using ncclRedOp_t = int;

// The RCCL functions the backend uses. Owns its dlopen handle.
class Rccl {
 public:
  Rccl() = default;
  Rccl(const Rccl&) = delete;
  Rccl& operator=(const Rccl&) = delete;
  ~Rccl();

  // Opens `path` or librccl.so.1; false (with `reason`) when absent,
  // incomplete or unable to serve the runtime: the real RCCL drives a real
  // runtime only, the tests' simulated RCCL the simulated one only, and with
  // the simulated runtime the default librccl.so.1 is not even opened (only
  // a library `path` names). Not thread-safe; call once at init.
  bool load(const std::string& path, bool runtime_simulated, std::string* reason);
  bool available() const { return handle_ != nullptr; }
  // True for the tests' simulated RCCL (testing/sim_rccl_hip.cpp).
  bool simulated() const { return simulated_; }

  const char* (*ncclGetErrorString)(ncclResult_t) = nullptr;
  ncclResult_t (*ncclCommInitAll)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclCommAbort)(ncclComm_t) = nullptr;
  ncclResult_t (*ncclCommGetAsyncError)(ncclComm_t, ncclResult_t*) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
  ncclResult_t (*ncclAllReduce)(const void*, void*, size_t, ncclDataType_t,
                                ncclRedOp_t, ncclComm_t, hipStream_t) = nullptr;
  ncclResult_t (*ncclBroadcast)(const void*, void*, size_t, ncclDataType_t,
                                int, ncclComm_t, hipStream_t) = nullptr;
  ncclResult_t (*ncclReduce)(const void*, void*, size_t, ncclDataType_t,
                             ncclRedOp_t, int, ncclComm_t,
                             hipStream_t) = nullptr;
  ncclResult_t (*ncclAllGather)(const void*, void*, size_t, ncclDataType_t,
                                ncclComm_t, hipStream_t) = nullptr;
  ncclResult_t (*ncclReduceScatter)(const void*, void*, size_t,
                                    ncclDataType_t, ncclRedOp_t, ncclComm_t,
                                    hipStream_t) = nullptr;
  ncclResult_t (*ncclSend)(const void*, size_t, ncclDataType_t, int,
                           ncclComm_t, hipStream_t) = nullptr;
  ncclResult_t (*ncclRecv)(void*, size_t, ncclDataType_t, int, ncclComm_t,
                           hipStream_t) = nullptr;

 private:
  void* handle_ = nullptr;
  bool simulated_ = false;
};

}  // namespace xal::hip
