// nccl_status.cpp -- NCCL's results, types and ops in xal's terms, through
// the NCCL ABI that the CUDA and HIP plugins share (xalsupport/nccl_abi.h).
#include "nccl_comm.h"
#include "xalsupport/nccl_abi.h"

namespace xal::cuda {
namespace abi = xal::support::nccl_abi;

// The shared ABI's values are nccl.h's: checked here, where nccl.h is.
static_assert(ncclSuccess == abi::kSuccess && ncclUnhandledCudaError == abi::kUnhandledCudaError &&
              ncclSystemError == abi::kSystemError && ncclInternalError == abi::kInternalError &&
              ncclInvalidArgument == abi::kInvalidArgument &&
              ncclInvalidUsage == abi::kInvalidUsage && ncclRemoteError == abi::kRemoteError &&
              ncclInProgress == abi::kInProgress);
static_assert(ncclInt8 == abi::kInt8 && ncclUint8 == abi::kUint8 && ncclInt32 == abi::kInt32 &&
              ncclUint32 == abi::kUint32 && ncclInt64 == abi::kInt64 &&
              ncclUint64 == abi::kUint64 && ncclFloat16 == abi::kFloat16 &&
              ncclFloat32 == abi::kFloat32 && ncclFloat64 == abi::kFloat64 &&
              ncclBfloat16 == abi::kBfloat16);
static_assert(ncclSum == abi::kSum && ncclProd == abi::kProd && ncclMax == abi::kMax &&
              ncclMin == abi::kMin && ncclAvg == abi::kAvg);

xal_status_t map_nccl(ncclResult_t r) { return abi::status_of(r); }

xal_status_t nccl_result(xal_backend_s* backend, ncclResult_t r,
                         const char* call, ncclComm_t comm,
                         const std::string& hint) {
  const xal_status_t status = map_nccl(r);
  if (status == XAL_SUCCESS || status == XAL_NOT_READY) return status;
  const Nccl& n = *backend->nccl;
  std::string message = std::string("cuda: ") + call +
                        " failed: " + n.ncclGetErrorString(r);
  const char* last = n.ncclGetLastError != nullptr ? n.ncclGetLastError(comm) : nullptr;
  if (last != nullptr && *last != '\0') message += std::string(": ") + last;
  message += hint;
  backend->services->set_error(status, r, abi::result_name(r), message.c_str());
  return status;
}

bool map_dtype(xal_dtype_t dtype, ncclDataType_t* out) {
  int type = 0;
  if (!abi::to_nccl(dtype, &type)) return false;
  *out = static_cast<ncclDataType_t>(type);
  return true;
}

bool map_op(xal_op_t op, ncclRedOp_t* out) {
  int nccl_op = 0;
  if (!abi::to_nccl(op, &nccl_op)) return false;
  *out = static_cast<ncclRedOp_t>(nccl_op);
  return true;
}

}  // namespace xal::cuda
