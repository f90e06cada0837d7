// XalBackend's point-to-point: send, recv, recvAnysource and the sends and
// receives of a coalesced batch (batch_isend_irecv). Each message is two of
// xal's: a header (tag, bytes) and the payload, sent and received inside
// one xal group (xal_group_start/end) with the batch's other messages.
#include <ATen/ATen.h>
#include <c10/util/Exception.h>

#include <chrono>
#include <string>
#include <thread>

#include "backend.hpp"
#include "xal_runtime.hpp"

namespace xal::torch_backend {

namespace {

constexpr int64_t kHeaderWords = 2;  // tag, payload bytes

size_t nbytes_of(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

const char* kind_name(int kind) {
  return kind == 0 ? "send" : kind == 1 ? "recv" : "recv_anysource";
}

}  // namespace

c10::intrusive_ptr<c10d::Work> XalBackend::enqueue_p2p(P2pOp::Kind kind,
                                                       std::vector<at::Tensor>& tensors, int peer,
                                                       int tag, const char* name) {
  TORCH_CHECK(tensors.size() == 1, "xal: ", name, " takes one tensor, got ", tensors.size());
  const at::Tensor& t = tensors[0];
  TORCH_CHECK(t.defined(), "xal: ", name, " got an undefined tensor");
  TORCH_CHECK(t.layout() == at::kStrided, "xal: ", name, " supports dense tensors only");
  if (kind != P2pOp::Kind::kRecvAny) {
    TORCH_CHECK(peer >= 0 && peer < size_, "xal: ", name, ": rank ", peer,
                " is outside the group of ", size_);
    TORCH_CHECK(peer != rank_, "xal: ", name, ": rank ", peer,
                " is this rank (a message to itself is not supported)");
  }
  auto op = std::make_shared<P2pOp>(P2pOp{kind, peer, tag, t});
  const c10d::OpType type = kind == P2pOp::Kind::kSend     ? c10d::OpType::SEND
                            : kind == P2pOp::Kind::kRecv ? c10d::OpType::RECV
                                                         : c10d::OpType::RECVANYSOURCE;
  std::vector<at::Tensor> outputs;
  if (kind != P2pOp::Kind::kSend) outputs.push_back(t);
  return enqueue(type, std::move(outputs), place_of(gdev_, tensors, name), [] {}, std::move(op));
}

c10::intrusive_ptr<c10d::Work> XalBackend::send(std::vector<at::Tensor>& tensors, int dstRank,
                                                int tag) {
  return enqueue_p2p(P2pOp::Kind::kSend, tensors, dstRank, tag, "send");
}

c10::intrusive_ptr<c10d::Work> XalBackend::recv(std::vector<at::Tensor>& tensors, int srcRank,
                                                int tag) {
  return enqueue_p2p(P2pOp::Kind::kRecv, tensors, srcRank, tag, "recv");
}

c10::intrusive_ptr<c10d::Work> XalBackend::recvAnysource(std::vector<at::Tensor>& tensors,
                                                         int tag) {
  return enqueue_p2p(P2pOp::Kind::kRecvAny, tensors, -1, tag, "recv_anysource");
}

std::vector<std::exception_ptr> XalBackend::run_p2p(const std::vector<P2pOp*>& ops) {
  // What the call is, for errors: "send to rank 1 (tag 0)", or a batch.
  std::string name;
  for (const P2pOp* op : ops) {
    if (!name.empty()) name += ", ";
    name += std::string(kind_name(static_cast<int>(op->kind))) +
            (op->kind == P2pOp::Kind::kSend ? " to rank " : " from rank ") +
            std::to_string(op->peer) + " (tag " + std::to_string(op->tag) + ")";
  }
  if (ops.size() > 1) name = "batch of point-to-point ops [" + name + "]";
  struct Message {
    at::Tensor header, payload;  // payload: dense, or one byte for no data
    size_t bytes;
  };
  std::vector<Message> msgs;
  std::vector<const at::Tensor*> inputs, outputs;
  msgs.reserve(ops.size());
  for (const P2pOp* op : ops) {
    Message m;
    const bool sending = op->kind == P2pOp::Kind::kSend;
    m.bytes = nbytes_of(op->tensor);
    m.payload = m.bytes == 0 ? at::empty({1}, at::kByte) : dense(op->tensor);
    m.header = sending ? at::tensor({op->tag, static_cast<int64_t>(m.bytes)}, at::kLong)
                       : at::full({kHeaderWords}, -1, at::kLong);
    msgs.push_back(std::move(m));
  }
  for (size_t i = 0; i < msgs.size(); ++i) {
    auto& to = ops[i]->kind == P2pOp::Kind::kSend ? inputs : outputs;
    to.push_back(&msgs[i].header);
    to.push_back(&msgs[i].payload);
  }
  TensorMemory im = memory(inputs, outputs, name.c_str());
  check_xal(name + " (xal_group_start)", xal_group_start());
  xal_status_t issued = XAL_SUCCESS;
  for (size_t i = 0; i < ops.size() && issued == XAL_SUCCESS; ++i) {
    const Message& m = msgs[i];
    const auto peer = static_cast<uint32_t>(ops[i]->peer);
    const size_t hb = kHeaderWords * sizeof(int64_t);
    if (ops[i]->kind == P2pOp::Kind::kSend) {
      issued = xal_send(comm_, im.ptr(m.header), hb, XAL_DTYPE_U8, peer, call_stream_);
      if (issued == XAL_SUCCESS)
        issued = xal_send(comm_, im.ptr(m.payload), m.bytes, XAL_DTYPE_U8, peer, call_stream_);
    } else {
      issued = xal_recv(comm_, im.ptr(m.header), hb, XAL_DTYPE_U8, peer, call_stream_);
      if (issued == XAL_SUCCESS)
        issued = xal_recv(comm_, im.ptr(m.payload), m.bytes, XAL_DTYPE_U8, peer, call_stream_);
    }
  }
  const xal_status_t ended = xal_group_end();
  sync(name.c_str(), issued != XAL_SUCCESS ? issued : ended);
  im.copy_out();
  std::vector<std::exception_ptr> errors(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    P2pOp& op = *ops[i];
    if (op.kind == P2pOp::Kind::kSend) continue;
    const Message& m = msgs[i];
    const int64_t tag = m.header[0].item<int64_t>(), bytes = m.header[1].item<int64_t>();
    try {
      TORCH_CHECK(tag == op.tag && bytes == static_cast<int64_t>(m.bytes), "xal: ",
                  kind_name(static_cast<int>(op.kind)), " from rank ", op.peer, " expects tag ",
                  op.tag, " and ", m.bytes, " bytes; the rank's next message has tag ", tag,
                  " and ", bytes, " bytes (messages of two ranks pair in the order they are "
                  "sent)");
      if (m.bytes && !m.payload.is_same(op.tensor)) op.tensor.copy_(m.payload.view_as(op.tensor));
    } catch (...) {
      errors[i] = std::current_exception();
    }
  }
  return errors;
}

void XalBackend::run_recv_any(P2pOp& op, XalWork& work) {
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + timeout_;
  int next = (rank_ + 1) % size_;
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    if (aborted_.load())
      C10_THROW_ERROR(DistBackendError, "xal: recv_anysource failed: XAL_ERROR_ABORTED: the "
                                        "group was aborted");
    const int from = offered_from_ ? offered_from_(next) : -1;
    if (from >= 0) {
      op.peer = from;
      std::vector<P2pOp*> one{&op};
      const std::vector<std::exception_ptr> errors = run_p2p(one);
      if (errors[0]) std::rethrow_exception(errors[0]);
      work.setSourceRank(from);
      return;
    }
    if (std::chrono::steady_clock::now() >= deadline)
      C10_THROW_ERROR(DistBackendError,
                      "xal: recv_anysource (tag " + std::to_string(op.tag) +
                          ") failed: XAL_ERROR_TIMEOUT: no rank sent a message within " +
                          std::to_string(timeout_.count()) + " ms (timeout)");
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(1000));
  }
}

}  // namespace xal::torch_backend
