#include "xalsupport/nccl_abi.h"

#include <array>
#include <utility>

namespace xal::support::nccl_abi {
namespace {

constexpr std::array<std::pair<xal_dtype_t, int>, 10> kTypes{{
    {XAL_DTYPE_I8, kInt8},
    {XAL_DTYPE_U8, kUint8},
    {XAL_DTYPE_I32, kInt32},
    {XAL_DTYPE_U32, kUint32},
    {XAL_DTYPE_I64, kInt64},
    {XAL_DTYPE_U64, kUint64},
    {XAL_DTYPE_F16, kFloat16},
    {XAL_DTYPE_BF16, kBfloat16},
    {XAL_DTYPE_F32, kFloat32},
    {XAL_DTYPE_F64, kFloat64},
}};

constexpr std::array<std::pair<xal_op_t, int>, 5> kOps{{
    {XAL_OP_SUM, kSum},
    {XAL_OP_PROD, kProd},
    {XAL_OP_MIN, kMin},
    {XAL_OP_MAX, kMax},
    {XAL_OP_AVG, kAvg},
}};

struct ResultRow {
  xal_status_t status;
  const char* name;
};

// Indexed by ncclResult_t.
constexpr std::array<ResultRow, 8> kResults{{
    {XAL_SUCCESS, "ncclSuccess"},
    {XAL_ERROR_BACKEND, "ncclUnhandledCudaError"},
    {XAL_ERROR_BACKEND, "ncclSystemError"},
    {XAL_ERROR_INTERNAL, "ncclInternalError"},
    {XAL_ERROR_INVALID_ARGUMENT, "ncclInvalidArgument"},
    {XAL_ERROR_INVALID_ARGUMENT, "ncclInvalidUsage"},
    {XAL_ERROR_BACKEND, "ncclRemoteError"},
    {XAL_NOT_READY, "ncclInProgress"},
}};

// Looks `value` up in element `From` (0 or 1) of `table`'s pairs and writes
// the other element of the first match to `out`; false when none matches.
template <size_t From, typename Table, typename Key, typename Out>
bool translate(const Table& table, Key value, Out* out) {
  for (const auto& row : table) {
    if (std::get<From>(row) == value) {
      *out = std::get<1 - From>(row);
      return true;
    }
  }
  return false;
}

bool known(int result) { return result >= 0 && result < static_cast<int>(kResults.size()); }

}  // namespace

xal_status_t status_of(int result) {
  return known(result) ? kResults[static_cast<size_t>(result)].status : XAL_ERROR_BACKEND;
}

const char* result_name(int result) {
  return known(result) ? kResults[static_cast<size_t>(result)].name : "ncclUnknownResult";
}

bool to_nccl(xal_dtype_t dtype, int* out) { return translate<0>(kTypes, dtype, out); }

bool to_nccl(xal_op_t op, int* out) { return translate<0>(kOps, op, out); }

bool from_nccl_dtype(int type, xal_dtype_t* out) { return translate<1>(kTypes, type, out); }

bool from_nccl_op(int op, xal_op_t* out) { return translate<1>(kOps, op, out); }

}  // namespace xal::support::nccl_abi
