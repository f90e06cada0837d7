// The host step of a point-to-point batch (p2p_rank.hpp): post every send,
// take every receive in op order, reduce, wait for the sends.
#include <cstring>
#include <map>
#include <memory>
#include <thread>

#include "../error.hpp"
#include "p2p_rank.hpp"
#include "transport_host.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core {

namespace {

using OpKind = P2pOp::Kind;

// The sources of one reduction target, in op order, and the messages held
// until it is reduced.
struct Reduction {
  const P2pOp* op = nullptr;
  void* acc = nullptr;
  std::vector<const void*> srcs;
  std::vector<std::shared_ptr<Mailbox::Slot>> held;
};

struct Remote {
  std::thread thread;
  xal_status_t status = XAL_SUCCESS;
  std::string why;
  std::unique_ptr<std::byte[]> temp;  // a reduction's incoming data
};

class Step {
 public:
  Step(const P2pStepInput& in) : in_(in), ops_(in.batch->ops), box_(in.shared->mailbox) {}

  xal_status_t run(std::string* why) {
    post_sends();
    start_remote_receives();
    take_receives();
    for (auto& [ptr, r] : reductions_) reduce(r);
    for (auto& s : sent_) {
      std::string w;
      note(box_.wait_taken(s, &w), w);
    }
    for (auto& [i, r] : remote_) join(i);
    *why = why_;
    return status_;
  }

  ~Step() {
    for (auto& [i, r] : remote_)
      if (r.thread.joinable()) r.thread.join();
  }

 private:
  bool local(uint32_t peer) const {
    return !in_.shared->remote || in_.shared->remote->is_local(peer);
  }
  size_t bytes(const P2pOp& op) const { return op.count * common::dtype_size(op.dtype); }
  Mailbox::Key key(size_t i, bool sending) const {
    const P2pOp& op = ops_[i];
    return sending ? Mailbox::Key{in_.rank, op.peer, in_.batch->seqs[i]}
                   : Mailbox::Key{op.peer, in_.rank, in_.batch->seqs[i]};
  }
  void note(xal_status_t s, const std::string& w) {
    if (s == XAL_SUCCESS || status_ != XAL_SUCCESS) return;
    status_ = s;
    why_ = w;
  }
  // A remote transfer on a thread of its own (transport calls block).
  template <class F>
  void start(size_t i, F f) {
    Remote& r = remote_[i];
    try {
      r.thread = std::thread([&r, f] { r.status = f(&r.why); });
    } catch (...) {
      r.status = XAL_ERROR_OUT_OF_HOST_MEMORY;
      r.why = "could not start a thread for a message to another process";
    }
  }
  void join(size_t i) {
    Remote& r = remote_[i];
    if (r.thread.joinable()) r.thread.join();
    note(r.status, r.why);
  }

  void post_sends() {
    for (size_t i = 0; i < ops_.size(); ++i) {
      const P2pOp& op = ops_[i];
      if (op.kind != OpKind::kSend) continue;
      void* data = in_.views[i];
      if (local(op.peer)) {
        sent_.push_back(box_.post(key(i, true), {data, op.count, op.dtype}));
        continue;
      }
      const P2pBuffer b{in_.device, op.ptr, data, bytes(op)};
      const P2pRemote* rm = in_.shared->remote.get();
      const uint32_t me = in_.rank;
      const uint64_t seq = in_.batch->seqs[i];
      start(i, [=](std::string* w) { return rm->send(b, me, op.peer, seq, w); });
    }
  }

  void start_remote_receives() {
    for (size_t i = 0; i < ops_.size(); ++i) {
      const P2pOp& op = ops_[i];
      if (op.kind == OpKind::kSend || local(op.peer)) continue;
      const size_t n = bytes(op);
      void* into = in_.views[i];
      if (op.kind == OpKind::kRecvReduce && n) {
        remote_[i].temp = std::make_unique_for_overwrite<std::byte[]>(n);
        into = remote_[i].temp.get();
      }
      const P2pBuffer b{in_.device, op.ptr, into, n};
      const P2pRemote* rm = in_.shared->remote.get();
      const uint32_t me = in_.rank;
      const uint64_t seq = in_.batch->seqs[i];
      start(i, [=](std::string* w) { return rm->recv(b, op.peer, me, seq, w); });
    }
  }

  void take_receives() {
    for (size_t i = 0; i < ops_.size(); ++i) {
      const P2pOp& op = ops_[i];
      if (op.kind == OpKind::kSend) continue;
      Reduction* r = nullptr;
      if (op.kind == OpKind::kRecvReduce) {
        r = &reductions_[op.ptr];
        r->op = &op;
        r->acc = in_.views[i];
      }
      if (!local(op.peer)) {
        join(i);
        if (r && remote_[i].status == XAL_SUCCESS) r->srcs.push_back(remote_[i].temp.get());
        continue;
      }
      std::shared_ptr<Mailbox::Slot> slot;
      Mailbox::Message m;
      std::string w;
      const xal_status_t s = box_.take(key(i, false), op.count, op.dtype, &slot, &m, &w);
      note(s, w);
      if (s != XAL_SUCCESS) continue;
      if (r) {
        r->srcs.push_back(m.data);
        r->held.push_back(std::move(slot));
        continue;
      }
      void* to[] = {in_.views[i]};
      if (bytes(op)) parallel_copy(to, m.data, bytes(op));
      box_.release(slot, XAL_SUCCESS, {});
    }
  }

  void reduce(Reduction& r) {
    const P2pOp& op = *r.op;
    if (status_ == XAL_SUCCESS && op.count && !r.srcs.empty()) {
      void* dst[] = {r.acc};
      parallel_reduce(op.dtype, op.op, dst, r.srcs, op.count,
                      static_cast<uint32_t>(r.srcs.size()));
    }
    for (auto& s : r.held) box_.release(s, XAL_SUCCESS, {});
  }

  const P2pStepInput& in_;
  const std::vector<P2pOp>& ops_;
  Mailbox& box_;
  std::vector<std::shared_ptr<Mailbox::Slot>> sent_;
  std::map<size_t, Remote> remote_;
  std::map<xal_devptr_t, Reduction> reductions_;
  xal_status_t status_ = XAL_SUCCESS;
  std::string why_;
};

}  // namespace

xal_status_t run_p2p_step(const P2pStepInput& in, std::string* why) noexcept {
  try {
    Step step(in);
    const xal_status_t s = step.run(why);
    // A transport that failed for good leaves this process's pairs unable to
    // pair again: the local waits end now rather than at their timeout.
    if (s == XAL_ERROR_TIMEOUT || s == XAL_ERROR_ABORTED || s == XAL_ERROR_BACKEND)
      in.shared->mailbox.break_with(s, *why);
    return s;
  } catch (...) {
    *why = "out of host memory in a point-to-point step";
    return XAL_ERROR_OUT_OF_HOST_MEMORY;
  }
}

}  // namespace xal::core
