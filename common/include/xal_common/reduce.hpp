// Element-wise reductions over xal's dtypes and ops, shared by the mock
// backend's collectives and the core's hierarchical path (which reduces in
// page-locked host memory). Pure functions over host memory; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "xal/xal.h"

namespace xal::common {

// Bytes per element; 0 for a value outside xal_dtype_t.
size_t dtype_size(int32_t dtype);

// "f32", "bf16", ...; "?" for an unknown value.
const char* dtype_name(int32_t dtype);
// "sum", "prod", ...; "?" for an unknown value.
const char* op_name(int32_t op);

// XAL_SUCCESS when the pair is supported; otherwise INVALID_ARGUMENT for a
// value outside the enums or NOT_SUPPORTED (avg on integer dtypes), with the
// reason in *why.
xal_status_t check_dtype_op(int32_t dtype, int32_t op, std::string* why);

// dsts[d][i] = op over r of srcs[r][i], for i in [0, count), for every d.
// Any dst may alias any src (in place). For XAL_OP_AVG the sum is divided by
// `avg_divisor` (the communicator size; srcs may hold fewer, pre-summed
// inputs). Halves (f16, bf16) accumulate in float and round once.
// Preconditions: check_dtype_op succeeded, srcs is not empty.
void reduce(xal_dtype_t dtype, xal_op_t op, std::span<void* const> dsts,
            std::span<const void* const> srcs, size_t count,
            uint32_t avg_divisor);

// Half conversions (round to nearest even), exposed for tests and references.
float f16_to_float(uint16_t h);
uint16_t float_to_f16(float f);
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);

}  // namespace xal::common
