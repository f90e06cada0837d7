// The checks and conversions the backend's calls share: tensors checked at
// the call, reductions as xal runs them, byte views. Internal to the
// backend's sources.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "xal/xal.h"

namespace xal::torch_backend {

// Every tensor a call takes: defined and dense (strided), on any device.
// Throws c10::Error naming `op`.
void check_tensor(const at::Tensor& t, const char* op);
void check_tensors(const std::vector<at::Tensor>& ts, const char* op);

// A reduction as xal runs it, decided in the caller's thread so that an
// unsupported op or dtype raises at the call.
struct Reduction {
  xal_dtype_t dtype = XAL_DTYPE_F32;
  xal_op_t op = XAL_OP_SUM;
  bool premul = false;
  double factor = 1.0;
  at::Tensor tensor_factor;

  // in * factor for PREMUL_SUM (a new tensor unless in_place), else in.
  at::Tensor scaled(const at::Tensor& in, bool in_place) const {
    if (!premul) return in;
    const at::Scalar f(factor);
    if (tensor_factor.defined()) {
      const at::Tensor tf = tensor_factor.to(at::kCPU).to(in.scalar_type());
      return in_place ? in.mul_(tf) : in.mul(tf);
    }
    return in_place ? in.mul_(f) : in.mul(f);
  }
};

// The reduction of `rop` over `st`, or c10::TypeError naming `name`, the op
// and the dtype (bitwise ops, AVG of integers, ...).
Reduction reduction(const c10d::ReduceOp& rop, at::ScalarType st, const char* name);

// A tensor's bytes; its bytes as a 1-D uint8 view (dense tensors); a size
// as torch's int64.
size_t nbytes(const at::Tensor& t);
at::Tensor bytes_of(const at::Tensor& t);
int64_t i64(size_t v);

}  // namespace xal::torch_backend
