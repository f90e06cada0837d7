// nccl_status.cpp -- NCCL's results, types and ops in xal's terms.
#include "nccl_comm.h"

namespace xal::cuda {
namespace {

const char* result_name(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "ncclSuccess";
    case ncclUnhandledCudaError: return "ncclUnhandledCudaError";
    case ncclSystemError: return "ncclSystemError";
    case ncclInternalError: return "ncclInternalError";
    case ncclInvalidArgument: return "ncclInvalidArgument";
    case ncclInvalidUsage: return "ncclInvalidUsage";
    case ncclRemoteError: return "ncclRemoteError";
    case ncclInProgress: return "ncclInProgress";
    default: return "ncclUnknownResult";
  }
}

}  // namespace

xal_status_t map_nccl(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return XAL_SUCCESS;
    case ncclInProgress: return XAL_NOT_READY;
    case ncclInvalidArgument:
    case ncclInvalidUsage: return XAL_ERROR_INVALID_ARGUMENT;
    case ncclInternalError: return XAL_ERROR_INTERNAL;
    default: return XAL_ERROR_BACKEND;
  }
}

xal_status_t nccl_result(xal_backend_s* backend, ncclResult_t r,
                         const char* call, ncclComm_t comm,
                         const std::string& hint) {
  const xal_status_t status = map_nccl(r);
  if (status == XAL_SUCCESS || status == XAL_NOT_READY) return status;
  const Nccl& n = *backend->nccl;
  std::string message = std::string("cuda: ") + call +
                        " failed: " + n.ncclGetErrorString(r);
  const char* last = n.ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') message += std::string(": ") + last;
  message += hint;
  backend->services->set_error(status, r, result_name(r), message.c_str());
  return status;
}

bool map_dtype(xal_dtype_t dtype, ncclDataType_t* out) {
  switch (dtype) {
    case XAL_DTYPE_I8: *out = ncclInt8; return true;
    case XAL_DTYPE_U8: *out = ncclUint8; return true;
    case XAL_DTYPE_I32: *out = ncclInt32; return true;
    case XAL_DTYPE_U32: *out = ncclUint32; return true;
    case XAL_DTYPE_I64: *out = ncclInt64; return true;
    case XAL_DTYPE_U64: *out = ncclUint64; return true;
    case XAL_DTYPE_F16: *out = ncclFloat16; return true;
    case XAL_DTYPE_BF16: *out = ncclBfloat16; return true;
    case XAL_DTYPE_F32: *out = ncclFloat32; return true;
    case XAL_DTYPE_F64: *out = ncclFloat64; return true;
    default: return false;
  }
}

bool map_op(xal_op_t op, ncclRedOp_t* out) {
  switch (op) {
    case XAL_OP_SUM: *out = ncclSum; return true;
    case XAL_OP_PROD: *out = ncclProd; return true;
    case XAL_OP_MIN: *out = ncclMin; return true;
    case XAL_OP_MAX: *out = ncclMax; return true;
    case XAL_OP_AVG: *out = ncclAvg; return true;
    default: return false;
  }
}

}  // namespace xal::cuda
