// The checks and conversions the backend's calls share (backend_ops.hpp).
#include "backend_ops.hpp"

#include <c10/util/Exception.h>

#include <string>

#include "xal_runtime.hpp"

namespace xal::torch_backend {

namespace {

const char* op_text(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

}  // namespace

void check_tensor(const at::Tensor& t, const char* op) {
  TORCH_CHECK(t.defined(), "xal: ", op, " got an undefined tensor");
  TORCH_CHECK(t.layout() == at::kStrided, "xal: ", op, " supports dense tensors only, got ",
              t.layout());
}

void check_tensors(const std::vector<at::Tensor>& ts, const char* op) {
  for (const at::Tensor& t : ts) check_tensor(t, op);
}


Reduction reduction(const c10d::ReduceOp& rop, at::ScalarType st, const char* name) {
  Reduction r;
  r.dtype = reduce_dtype(name, st);
  const bool is_bool = st == at::kBool;
  const bool is_float = at::isFloatingType(st);
  auto unsupported = [&](const char* why) {
    C10_THROW_ERROR(TypeError, std::string("xal: ") + name + " does not support ReduceOp." +
                                   op_text(rop.op_) + " on " + c10::toString(st) + ": " + why);
  };
  switch (rop.op_) {
    case c10d::ReduceOp::SUM: r.op = is_bool ? XAL_OP_MAX : XAL_OP_SUM; break;  // logical or
    case c10d::ReduceOp::PRODUCT: r.op = is_bool ? XAL_OP_MIN : XAL_OP_PROD; break;  // and
    case c10d::ReduceOp::MIN: r.op = XAL_OP_MIN; break;
    case c10d::ReduceOp::MAX: r.op = XAL_OP_MAX; break;
    case c10d::ReduceOp::AVG:
      if (!is_float) unsupported("xal averages floating-point dtypes only");
      r.op = XAL_OP_AVG;
      break;
    case c10d::ReduceOp::PREMUL_SUM: {
      if (!is_float) unsupported("a premultiplied sum needs a floating-point dtype");
      const auto* sup = dynamic_cast<const c10d::PreMulSumSupplement*>(rop.supplement_.get());
      TORCH_CHECK(sup, "xal: ", name, ": ReduceOp.PREMUL_SUM without its factor");
      r.op = XAL_OP_SUM;
      r.premul = true;
      r.factor = sup->double_factor;
      r.tensor_factor = sup->tensor_factor;
      break;
    }
    default: unsupported("xal has no bitwise reductions");
  }
  return r;
}

size_t nbytes(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

at::Tensor bytes_of(const at::Tensor& t) { return t.reshape({-1}).view(at::kByte); }
int64_t i64(size_t v) { return static_cast<int64_t>(v); }

}  // namespace xal::torch_backend
