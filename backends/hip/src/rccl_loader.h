// rccl_loader.h -- RCCL (the ROCm collective library), loaded with dlopen
// when present. RCCL's headers are not packaged for Debian, so the few
// types and functions used are declared here from RCCL's documented C ABI
// (the same as NCCL's); the declarations only give the function types of
// the symbol list (rccl_symbols.h): the plugin never links librccl.
#pragma once

#include <cstddef>
#include <string>

#include "hip_api.h"
#include "rccl_symbols.h"

namespace xal::hip {

using ncclResult_t = int;  // 0: ncclSuccess
using ncclComm_t = struct ncclComm*;
using ncclDataType_t = int;
using ncclRedOp_t = int;

}  // namespace xal::hip

extern "C" {
const char* ncclGetErrorString(xal::hip::ncclResult_t result);
xal::hip::ncclResult_t ncclCommInitAll(xal::hip::ncclComm_t* comms, int count, const int* devices);
xal::hip::ncclResult_t ncclCommDestroy(xal::hip::ncclComm_t comm);
xal::hip::ncclResult_t ncclCommAbort(xal::hip::ncclComm_t comm);
xal::hip::ncclResult_t ncclCommGetAsyncError(xal::hip::ncclComm_t comm,
                                             xal::hip::ncclResult_t* async_error);
xal::hip::ncclResult_t ncclGroupStart();
xal::hip::ncclResult_t ncclGroupEnd();
xal::hip::ncclResult_t ncclAllReduce(const void* send, void* recv, size_t count,
                                     xal::hip::ncclDataType_t type, xal::hip::ncclRedOp_t op,
                                     xal::hip::ncclComm_t comm, hipStream_t stream);
xal::hip::ncclResult_t ncclBroadcast(const void* send, void* recv, size_t count,
                                     xal::hip::ncclDataType_t type, int root,
                                     xal::hip::ncclComm_t comm, hipStream_t stream);
xal::hip::ncclResult_t ncclReduce(const void* send, void* recv, size_t count,
                                  xal::hip::ncclDataType_t type, xal::hip::ncclRedOp_t op, int root,
                                  xal::hip::ncclComm_t comm, hipStream_t stream);
xal::hip::ncclResult_t ncclAllGather(const void* send, void* recv, size_t count,
                                     xal::hip::ncclDataType_t type, xal::hip::ncclComm_t comm,
                                     hipStream_t stream);
xal::hip::ncclResult_t ncclReduceScatter(const void* send, void* recv, size_t count,
                                         xal::hip::ncclDataType_t type, xal::hip::ncclRedOp_t op,
                                         xal::hip::ncclComm_t comm, hipStream_t stream);
xal::hip::ncclResult_t ncclSend(const void* send, size_t count, xal::hip::ncclDataType_t type,
                                int peer, xal::hip::ncclComm_t comm, hipStream_t stream);
xal::hip::ncclResult_t ncclRecv(void* recv, size_t count, xal::hip::ncclDataType_t type, int peer,
                                xal::hip::ncclComm_t comm, hipStream_t stream);
}

namespace xal::hip {

// The RCCL functions the backend uses (rccl_symbols.h). Owns its dlopen
// handle. Read-only after load(); thread-safe as RCCL is.
class Rccl {
 public:
  Rccl() = default;
  Rccl(const Rccl&) = delete;
  Rccl& operator=(const Rccl&) = delete;
  ~Rccl();

  // Opens `path` or librccl.so.1; false (with `reason`) when absent,
  // incomplete ("<library> is too old: missing <name> (RCCL with NCCL API
  // <since> or newer needed)") or unable to serve the runtime: the real
  // RCCL drives a real runtime only, the tests' simulated RCCL the
  // simulated one only, and with the simulated runtime the default
  // librccl.so.1 is not even opened (only a library `path` names). Not
  // thread-safe; call once at init.
  bool load(const std::string& path, bool runtime_simulated, std::string* reason);
  bool available() const { return handle_ != nullptr; }
  // True for the tests' simulated RCCL (testing/sim_rccl_hip.cpp).
  bool simulated() const { return simulated_; }

#define XAL_RCCL_MEMBER(kind, name, since) decltype(&::name) name = nullptr;
  XAL_RCCL_SYMBOLS(XAL_RCCL_MEMBER)
#undef XAL_RCCL_MEMBER

 private:
  void* handle_ = nullptr;
  bool simulated_ = false;
};

}  // namespace xal::hip
