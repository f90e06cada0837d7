// NCCL's C ABI in xal's terms: the values of ncclResult_t, ncclDataType_t
// and ncclRedOp_t as NCCL documents them (RCCL's ABI is the same), and the
// mappings between them and xal's statuses, dtypes and ops. Shared by the
// CUDA plugin (NCCL, which checks these values against nccl.h at compile
// time), the HIP plugin (RCCL, whose headers Debian does not package) and
// the tests' simulated NCCL. All functions are pure and thread-safe.
#pragma once

#include "xal/xal.h"

namespace xal::support::nccl_abi {

// ncclResult_t.
inline constexpr int kSuccess = 0;
inline constexpr int kUnhandledCudaError = 1;  // ncclUnhandledCudaError: the device runtime failed
inline constexpr int kSystemError = 2;
inline constexpr int kInternalError = 3;
inline constexpr int kInvalidArgument = 4;
inline constexpr int kInvalidUsage = 5;
inline constexpr int kRemoteError = 6;
inline constexpr int kInProgress = 7;

// ncclDataType_t (those xal has).
inline constexpr int kInt8 = 0;
inline constexpr int kUint8 = 1;
inline constexpr int kInt32 = 2;
inline constexpr int kUint32 = 3;
inline constexpr int kInt64 = 4;
inline constexpr int kUint64 = 5;
inline constexpr int kFloat16 = 6;
inline constexpr int kFloat32 = 7;
inline constexpr int kFloat64 = 8;
inline constexpr int kBfloat16 = 9;

// ncclRedOp_t (the predefined ones).
inline constexpr int kSum = 0;
inline constexpr int kProd = 1;
inline constexpr int kMax = 2;
inline constexpr int kMin = 3;
inline constexpr int kAvg = 4;

// xal's status for an NCCL result: success, NOT_READY for "in progress",
// INVALID_ARGUMENT for invalid argument or usage, INTERNAL for NCCL's own
// fault, BACKEND for the rest (device runtime, system, remote, unknown).
xal_status_t status_of(int result);
// The enumerator's name ("ncclInvalidUsage"); "ncclUnknownResult" for a
// value NCCL does not define.
const char* result_name(int result);

// NCCL's data type / op for xal's; false for one NCCL does not have.
bool to_nccl(xal_dtype_t dtype, int* out);
bool to_nccl(xal_op_t op, int* out);
// xal's dtype / op for NCCL's; false for one xal does not have.
bool from_nccl_dtype(int type, xal_dtype_t* out);
bool from_nccl_op(int op, xal_op_t* out);

}  // namespace xal::support::nccl_abi
