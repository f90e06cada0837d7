// XalBackend's collectives as c10d calls them: the arguments checked in
// the caller's thread (a wrong size, rank or dtype raises at the call), the
// work queued for the worker (backend_worker.cpp), which runs the steps of
// backend.cpp. The all-to-alls, gather and scatter: backend_alltoall.cpp.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <cstring>

#include "backend.hpp"
#include "backend_ops.hpp"
#include "xal_runtime.hpp"

namespace xal::torch_backend {

c10::intrusive_ptr<c10d::Work> XalBackend::broadcast(std::vector<at::Tensor>& tensors,
                                                     const c10d::BroadcastOptions& opts) {
  check_tensors(tensors, "broadcast");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: broadcast: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::BROADCAST, tensors, place_of(gdev_, tensors, "broadcast"), [this, tensors, root]() mutable {
    for (at::Tensor& t : tensors) run_broadcast(t, root);
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allreduce(std::vector<at::Tensor>& tensors,
                                                     const c10d::AllreduceOptions& opts) {
  check_tensors(tensors, "allreduce");
  for (const at::Tensor& t : tensors) reduction(opts.reduceOp, t.scalar_type(), "allreduce");
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE, tensors, place_of(gdev_, tensors, "allreduce"), [this, tensors, op]() mutable {
    for (at::Tensor& t : tensors) run_allreduce(t, op, "allreduce");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allreduce_coalesced(
    std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) {
  check_tensors(tensors, "allreduce_coalesced");
  for (const at::Tensor& t : tensors)
    reduction(opts.reduceOp, t.scalar_type(), "allreduce_coalesced");
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::ALLREDUCE_COALESCED, tensors,
                 place_of(gdev_, tensors, "allreduce_coalesced"), [this, tensors, op]() mutable {
    for (at::Tensor& t : tensors) run_allreduce(t, op, "allreduce_coalesced");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::reduce(std::vector<at::Tensor>& tensors,
                                                  const c10d::ReduceOptions& opts) {
  check_tensors(tensors, "reduce");
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: reduce: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  for (const at::Tensor& t : tensors) reduction(opts.reduceOp, t.scalar_type(), "reduce");
  c10d::ReduceOp op = opts.reduceOp;
  const int root = static_cast<int>(opts.rootRank);
  return enqueue(c10d::OpType::REDUCE, tensors, place_of(gdev_, tensors, "reduce"), [this, tensors, op, root]() mutable {
    for (at::Tensor& t : tensors) run_reduce(t, op, root);
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                     std::vector<at::Tensor>& inputs,
                                                     const c10d::AllgatherOptions& /*opts*/) {
  TORCH_CHECK(inputs.size() == 1 && outputs.size() == 1,
              "xal: allgather takes one input tensor and one list of outputs");
  check_tensor(inputs[0], "allgather");
  check_tensors(outputs[0], "allgather");
  TORCH_CHECK(static_cast<int>(outputs[0].size()) == size_, "xal: allgather: ", size_,
              " output tensors expected, got ", outputs[0].size());
  for (const at::Tensor& o : outputs[0])
    TORCH_CHECK(o.numel() == inputs[0].numel() && o.scalar_type() == inputs[0].scalar_type(),
                "xal: allgather: every output must have the input's size and dtype");
  at::Tensor in = inputs[0];
  std::vector<at::Tensor> outs = outputs[0];
  std::vector<at::Tensor> all = outs;
  all.push_back(in);
  return enqueue(c10d::OpType::ALLGATHER, outs, place_of(gdev_, all, "allgather"), [this, in, outs]() mutable {
    at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
    run_allgather(flat, in, "allgather");
    for (int r = 0; r < size_; ++r)
      outs[r].copy_(flat.narrow(0, r * in.numel(), in.numel()).view(outs[r].sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                           const c10d::AllgatherOptions& /*opts*/) {
  check_tensor(input, "allgather_into_tensor");
  check_tensor(output, "allgather_into_tensor");
  TORCH_CHECK(output.numel() == input.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "xal: allgather_into_tensor: the output must hold ", size_,
              " times the input's elements, of its dtype");
  at::Tensor out = output, in = input;
  return enqueue(c10d::OpType::_ALLGATHER_BASE, {output},
                 place_of(gdev_, {output, input}, "allgather_into_tensor"), [this, out, in]() mutable {
    run_allgather(out, in, "allgather_into_tensor");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allgather_into_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*opts*/) {
  TORCH_CHECK(outputs.size() == inputs.size(),
              "xal: allgather_into_tensor_coalesced: as many outputs as inputs expected");
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "allgather_into_tensor_coalesced");
    check_tensor(outputs[i], "allgather_into_tensor_coalesced");
    TORCH_CHECK(outputs[i].numel() == inputs[i].numel() * size_ &&
                    outputs[i].scalar_type() == inputs[i].scalar_type(),
                "xal: allgather_into_tensor_coalesced: output ", i, " must hold ", size_,
                " times its input's elements, of its dtype");
  }
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return enqueue(c10d::OpType::COALESCED, outputs,
                 place_of(gdev_, all, "allgather_into_tensor_coalesced"),
                 [this, outputs, inputs]() mutable {
    for (size_t i = 0; i < inputs.size(); ++i)
      run_allgather(outputs[i], inputs[i], "allgather_into_tensor_coalesced");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == 1 && inputs.size() == 1,
              "xal: reduce_scatter takes one output tensor and one list of inputs");
  check_tensor(outputs[0], "reduce_scatter");
  check_tensors(inputs[0], "reduce_scatter");
  TORCH_CHECK(static_cast<int>(inputs[0].size()) == size_, "xal: reduce_scatter: ", size_,
              " input tensors expected, got ", inputs[0].size());
  for (const at::Tensor& i : inputs[0])
    TORCH_CHECK(i.numel() == outputs[0].numel() && i.scalar_type() == outputs[0].scalar_type(),
                "xal: reduce_scatter: every input must have the output's size and dtype");
  reduction(opts.reduceOp, outputs[0].scalar_type(), "reduce_scatter");
  at::Tensor out = outputs[0];
  std::vector<at::Tensor> ins = inputs[0];
  c10d::ReduceOp op = opts.reduceOp;
  std::vector<at::Tensor> all = ins;
  all.push_back(out);
  return enqueue(c10d::OpType::REDUCE_SCATTER, outputs, place_of(gdev_, all, "reduce_scatter"), [this, out, ins, op]() mutable {
    std::vector<at::Tensor> flat;
    for (const at::Tensor& i : ins) flat.push_back(i.reshape({-1}));
    run_reduce_scatter(out, at::cat(flat), op, "reduce_scatter");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  check_tensor(input, "reduce_scatter_tensor");
  check_tensor(output, "reduce_scatter_tensor");
  TORCH_CHECK(input.numel() == output.numel() * size_ &&
                  output.scalar_type() == input.scalar_type(),
              "xal: reduce_scatter_tensor: the input must hold ", size_,
              " times the output's elements, of its dtype");
  reduction(opts.reduceOp, input.scalar_type(), "reduce_scatter_tensor");
  at::Tensor out = output, in = input;
  c10d::ReduceOp op = opts.reduceOp;
  return enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, {output},
                 place_of(gdev_, {output, input}, "reduce_scatter_tensor"), [this, out, in, op]() mutable {
    run_reduce_scatter(out, in, op, "reduce_scatter_tensor");
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(),
              "xal: reduce_scatter_tensor_coalesced: as many outputs as inputs expected");
  for (size_t i = 0; i < inputs.size(); ++i) {
    check_tensor(inputs[i], "reduce_scatter_tensor_coalesced");
    check_tensor(outputs[i], "reduce_scatter_tensor_coalesced");
    TORCH_CHECK(inputs[i].numel() == outputs[i].numel() * size_ &&
                    outputs[i].scalar_type() == inputs[i].scalar_type(),
                "xal: reduce_scatter_tensor_coalesced: input ", i, " must hold ", size_,
                " times its output's elements, of its dtype");
    reduction(opts.reduceOp, inputs[i].scalar_type(), "reduce_scatter_tensor_coalesced");
  }
  c10d::ReduceOp op = opts.reduceOp;
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return enqueue(c10d::OpType::COALESCED, outputs,
                 place_of(gdev_, all, "reduce_scatter_tensor_coalesced"),
                 [this, outputs, inputs, op]() mutable {
    for (size_t i = 0; i < inputs.size(); ++i)
      run_reduce_scatter(outputs[i], inputs[i], op, "reduce_scatter_tensor_coalesced");
  });
}

}  // namespace xal::torch_backend
