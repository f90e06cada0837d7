// XalBackend's all-to-alls (equal and uneven splits, lists of tensors),
// gather and scatter, the test hook of the CUDA-tensor path and barrier.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <algorithm>
#include <cstring>

#include "backend.hpp"
#include "backend_ops.hpp"
#include "xal_runtime.hpp"

namespace xal::torch_backend {

c10::intrusive_ptr<c10d::Work> XalBackend::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                         std::vector<int64_t>& output_splits,
                                                         std::vector<int64_t>& input_splits,
                                                         const c10d::AllToAllOptions& /*opts*/) {
  constexpr const char* kName = "alltoall_base";
  check_tensor(input, kName);
  check_tensor(output, kName);
  TORCH_CHECK(input.scalar_type() == output.scalar_type(), "xal: ", kName,
              ": input and output dtypes differ");
  // Splits in rows of dim 0; empty: equal parts.
  auto splits = [&](const std::vector<int64_t>& given, const at::Tensor& t, const char* which) {
    std::vector<int64_t> s = given;
    const int64_t rows = t.dim() ? t.size(0) : t.numel();
    if (s.empty()) {
      TORCH_CHECK(rows % size_ == 0, "xal: ", kName, ": ", which, " dim 0 (", rows,
                  ") does not split into ", size_, " equal parts");
      s.assign(static_cast<size_t>(size_), rows / size_);
    }
    TORCH_CHECK(static_cast<int>(s.size()) == size_, "xal: ", kName, ": ", which, " splits have ",
                s.size(), " entries, the group ", size_);
    int64_t sum = 0;
    for (int64_t v : s) {
      TORCH_CHECK(v >= 0, "xal: ", kName, ": negative split");
      sum += v;
    }
    TORCH_CHECK(sum == rows, "xal: ", kName, ": ", which, " splits add up to ", sum, ", dim 0 is ",
                rows);
    return s;
  };
  const std::vector<int64_t> in_s = splits(input_splits, input, "input");
  const std::vector<int64_t> out_s = splits(output_splits, output, "output");
  at::Tensor out = output, in = input;
  return enqueue(c10d::OpType::ALLTOALL_BASE, {output}, place_of(gdev_, {output, input}, kName), [this, out, in, in_s, out_s]() mutable {
    const at::Tensor src = dense(in);
    at::Tensor dst = dense(out);
    const int64_t in_rows = src.dim() ? src.size(0) : src.numel();
    const int64_t out_rows = dst.dim() ? dst.size(0) : dst.numel();
    const size_t in_row = in_rows ? nbytes(src) / static_cast<size_t>(in_rows) : 0;
    const size_t out_row = out_rows ? nbytes(dst) / static_cast<size_t>(out_rows) : 0;
    int64_t local = 0;
    for (int q = 0; q < size_; ++q)
      local = std::max({local, in_s[q] * static_cast<int64_t>(in_row),
                        out_s[q] * static_cast<int64_t>(out_row)});
    // One block size for every pair (the largest piece of any rank):
    // pieces are padded to it where they differ.
    const auto block = static_cast<size_t>(group_max(local, kName));
    const size_t n = static_cast<size_t>(size_);
    bool send_packed = true, recv_packed = true;
    for (size_t q = 0; q < n; ++q) {
      send_packed = send_packed && static_cast<size_t>(in_s[q]) * in_row == block;
      recv_packed = recv_packed && static_cast<size_t>(out_s[q]) * out_row == block;
    }
    // Pieces are copied with torch (on the call's device: src and dst are
    // on the CPU, or both on the group's card).
    at::Tensor send = src, recv = dst;
    if (!send_packed) {
      send = at::empty({i64(n * block)}, src.options().dtype(at::kByte));
      const at::Tensor from = bytes_of(src);
      size_t off = 0;
      for (size_t q = 0; q < n; ++q) {
        const size_t b = static_cast<size_t>(in_s[q]) * in_row;
        if (b) send.narrow(0, i64(q * block), i64(b)).copy_(from.narrow(0, i64(off), i64(b)));
        off += b;
      }
    }
    if (!recv_packed) recv = at::empty({i64(n * block)}, dst.options().dtype(at::kByte));
    run_alltoall_bytes(recv, send, block, kName);
    if (!recv_packed) {
      at::Tensor to = bytes_of(dst);
      size_t off = 0;
      for (size_t p = 0; p < n; ++p) {
        const size_t b = static_cast<size_t>(out_s[p]) * out_row;
        if (b) to.narrow(0, i64(off), i64(b)).copy_(recv.narrow(0, i64(p * block), i64(b)));
        off += b;
      }
    }
    write_back(out, dst);
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::alltoall(std::vector<at::Tensor>& outputs,
                                                    std::vector<at::Tensor>& inputs,
                                                    const c10d::AllToAllOptions& /*opts*/) {
  constexpr const char* kName = "alltoall";
  check_tensors(inputs, kName);
  check_tensors(outputs, kName);
  TORCH_CHECK(static_cast<int>(inputs.size()) == size_ &&
                  static_cast<int>(outputs.size()) == size_,
              "xal: alltoall: ", size_, " inputs and outputs expected");
  std::vector<at::Tensor> all = outputs;
  all.insert(all.end(), inputs.begin(), inputs.end());
  return enqueue(c10d::OpType::ALLTOALL, outputs, place_of(gdev_, all, kName), [this, outputs, inputs]() mutable {
    const size_t n = static_cast<size_t>(size_);
    int64_t local = 0;
    for (size_t q = 0; q < n; ++q)
      local = std::max({local, static_cast<int64_t>(nbytes(inputs[q])),
                        static_cast<int64_t>(nbytes(outputs[q]))});
    const auto block = static_cast<size_t>(group_max(local, kName));
    // On the group's card when the tensors are, else on the CPU.
    const at::TensorOptions bytes = at::TensorOptions().dtype(at::kByte).device(
        place_.device_memory ? inputs[0].device() : at::Device(at::kCPU));
    at::Tensor send = at::empty({i64(n * block)}, bytes);
    at::Tensor recv = at::empty({i64(n * block)}, bytes);
    for (size_t q = 0; q < n; ++q) {
      const at::Tensor s = dense(inputs[q]);
      if (nbytes(s)) send.narrow(0, i64(q * block), i64(nbytes(s))).copy_(bytes_of(s));
    }
    run_alltoall_bytes(recv, send, block, kName);
    for (size_t p = 0; p < n; ++p) {
      at::Tensor d = dense(outputs[p]);
      if (nbytes(d)) bytes_of(d).copy_(recv.narrow(0, i64(p * block), i64(nbytes(d))));
      write_back(outputs[p], d);
    }
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                  std::vector<at::Tensor>& inputs,
                                                  const c10d::GatherOptions& opts) {
  constexpr const char* kName = "gather";
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: gather: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  TORCH_CHECK(inputs.size() == 1, "xal: gather takes one input tensor");
  check_tensor(inputs[0], kName);
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> outs;
  if (rank_ == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
                "xal: gather: the root takes one list of ", size_, " output tensors");
    check_tensors(outputs[0], kName);
    for (const at::Tensor& o : outputs[0])
      TORCH_CHECK(o.numel() == inputs[0].numel() && o.scalar_type() == inputs[0].scalar_type(),
                  "xal: gather: every output must have the input's size and dtype");
    outs = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "xal: gather: only the root takes output tensors");
  }
  at::Tensor in = inputs[0];
  // Through xal's all-gather (every rank receives; the root keeps it).
  std::vector<at::Tensor> all = outs;
  all.push_back(in);
  return enqueue(c10d::OpType::GATHER, outs, place_of(gdev_, all, kName), [this, in, outs]() mutable {
    at::Tensor flat = at::empty({size_ * in.numel()}, in.options());
    run_allgather(flat, in, "gather");
    for (size_t r = 0; r < outs.size(); ++r)
      outs[r].copy_(flat.narrow(0, static_cast<int64_t>(r) * in.numel(), in.numel())
                        .view(outs[r].sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::scatter(std::vector<at::Tensor>& outputs,
                                                   std::vector<std::vector<at::Tensor>>& inputs,
                                                   const c10d::ScatterOptions& opts) {
  constexpr const char* kName = "scatter";
  TORCH_CHECK(opts.rootRank >= 0 && opts.rootRank < size_, "xal: scatter: root rank ",
              opts.rootRank, " is outside the group of ", size_);
  TORCH_CHECK(outputs.size() == 1, "xal: scatter takes one output tensor");
  check_tensor(outputs[0], kName);
  const int root = static_cast<int>(opts.rootRank);
  std::vector<at::Tensor> ins;
  if (rank_ == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
                "xal: scatter: the root takes one list of ", size_, " input tensors");
    check_tensors(inputs[0], kName);
    for (const at::Tensor& i : inputs[0])
      TORCH_CHECK(i.numel() == outputs[0].numel() && i.scalar_type() == outputs[0].scalar_type(),
                  "xal: scatter: every input must have the output's size and dtype");
    ins = inputs[0];
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "xal: scatter: only the root takes input tensors");
  }
  at::Tensor out = outputs[0];
  // Through xal's broadcast of the root's pieces (each rank keeps its own).
  std::vector<at::Tensor> all = ins;
  all.push_back(out);
  return enqueue(c10d::OpType::SCATTER, outputs, place_of(gdev_, all, kName), [this, out, ins, root]() mutable {
    const int64_t n = out.numel();
    at::Tensor flat = at::empty({size_ * n}, out.options());
    for (size_t r = 0; r < ins.size(); ++r)
      flat.narrow(0, static_cast<int64_t>(r) * n, n).copy_(ins[r].reshape({-1}));
    run_broadcast(flat, root);
    out.copy_(flat.narrow(0, static_cast<int64_t>(rank_) * n, n).view(out.sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> XalBackend::allreduceDeviceMemory(uint64_t ptr, int64_t count,
                                                                 at::ScalarType dtype,
                                                                 uint64_t native_stream) {
  TORCH_CHECK(ptr != 0 && count > 0, "xal: allreduceDeviceMemory: a pointer and a count > 0");
  TORCH_CHECK(gdev_.imports && (gdev_.backend == "cuda" || gdev_.backend == "hip"),
              "xal: allreduceDeviceMemory needs a CUDA or HIP card that imports memory and "
              "streams; the group runs on ", describe_device(dev_));
  // A CUDA tensor over the memory, as torch would hand it to allreduce.
  // (target_device: torch does not ask its CUDA runtime where the memory is.)
  const at::Device card(at::kCUDA, static_cast<c10::DeviceIndex>(gdev_.backend_index));
  at::Tensor t = at::for_blob(reinterpret_cast<void*>(ptr), {count})
                     .options(at::TensorOptions().dtype(dtype).device(card))
                     .target_device(card)
                     .make_tensor();
  CallPlace place;
  place.device_memory = true;
  place.native_stream = native_stream;
  const c10d::ReduceOp op(c10d::ReduceOp::SUM);
  return enqueue(c10d::OpType::ALLREDUCE, {t}, place,
                 [this, t, op]() mutable { run_allreduce(t, op, "allreduce"); });
}

c10::intrusive_ptr<c10d::Work> XalBackend::barrier(const c10d::BarrierOptions& /*opts*/) {
  return enqueue(c10d::OpType::BARRIER, {}, CallPlace{}, [this] {
    at::Tensor t = at::zeros({1}, at::kInt);
    run_allreduce(t, c10d::ReduceOp(c10d::ReduceOp::SUM), "barrier");
  });
}

}  // namespace xal::torch_backend
