// Batches of point-to-point messages: kept in a group, then queued on the
// rank's stream with their staging copies (p2p_rank.hpp).
#include "p2p_rank.hpp"

#include "../comm.hpp"
#include "../error.hpp"
#include "../stream_failures.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core {

namespace {

using OpKind = P2pOp::Kind;

// Everything one queued batch uses until its last host function has run.
struct Call {
  uint32_t rank = 0;
  DeviceObj* device = nullptr;
  std::shared_ptr<P2pShared> shared;
  P2pRank::Batch batch;
  xal_bstream_t* stream = nullptr;
  std::vector<void*> views;                          // per op (see P2pStepInput)
  std::vector<std::unique_ptr<std::byte[]>> staging;  // per op; null: in place

  void run() noexcept {
    P2pStepInput in{rank, device, shared.get(), &batch, views};
    std::string why;
    const xal_status_t s = run_p2p_step(in, &why);
    if (s == XAL_SUCCESS) return;
    shared->error->record(s);
    note_stream_failure(stream, s, why);
  }
};

void run_call(void* user) noexcept {
  auto* call = static_cast<std::shared_ptr<Call>*>(user);
  (*call)->run();
}
void drop_call(void* user) noexcept {
  std::unique_ptr<std::shared_ptr<Call>> owned(static_cast<std::shared_ptr<Call>*>(user));
}

}  // namespace

xal_status_t P2pRank::submit(std::span<const P2pOp> ops, StreamObj* stream) {
  if (std::string why; xal_status_t s = shared_->mailbox.broken(&why))
    return fail(device_, s, cat("point-to-point: ", why));
  // Sequences are counted in issue order, even for calls kept in a group.
  std::vector<uint64_t> seqs;
  seqs.reserve(ops.size());
  for (const P2pOp& op : ops)
    seqs.push_back(op.kind == OpKind::kSend ? sent_[op.peer]++ : received_[op.peer]++);
  // Inside a group, the rank's messages on one stream merge into one batch
  // until other work of the rank or the stream is kept in between (other
  // ranks' calls may come in between: each rank's batch is its own).
  if (open_ && open_->stream == stream->native && open_serial_ != 0 &&
      last_kept_serial(key_) == open_serial_) {
    open_->ops.insert(open_->ops.end(), ops.begin(), ops.end());
    open_->seqs.insert(open_->seqs.end(), seqs.begin(), seqs.end());
    return XAL_SUCCESS;
  }
  auto b = std::make_shared<Batch>();
  b->stream = stream->native;
  b->ops.assign(ops.begin(), ops.end());
  b->seqs = std::move(seqs);
  if (defer_to_group_end(key_, [this, b] { return flush(*b); })) {
    open_ = std::move(b);
    open_serial_ = last_kept_serial(key_);
    return XAL_SUCCESS;
  }
  open_.reset();
  return flush(*b);
}

// Queues the batch: staging copies in, the host step, copies out, then the
// release of its state. A failure to queue breaks the point-to-point of the
// communicator (the sequences no longer pair).
xal_status_t P2pRank::flush(const Batch& b) {
  const xal_backend_table_t* t = device_->hdr.table;
  auto call = std::make_shared<Call>();
  call->rank = rank_;
  call->device = device_;
  call->shared = shared_;
  call->batch = b;
  call->stream = b.stream;
  const size_t n = b.ops.size();
  call->views.assign(n, nullptr);
  call->staging.resize(n);
  auto broken = [&](xal_status_t s) {
    if (s >= 0) return s;
    const xal_status_t r = fail_backend(device_->backend, device_, s);
    xal_error_info_t e{};
    e.struct_size = sizeof e;
    xal_last_error(&e);
    shared_->mailbox.break_with(s, cat("a point-to-point batch of rank ", rank_,
                                       " could not be queued: ", e.message));
    return r;
  };
  std::map<xal_devptr_t, size_t> target_of;  // a reduction's first op
  std::vector<size_t> copy_out;
  for (size_t i = 0; i < n; ++i) {
    const P2pOp& op = b.ops[i];
    const size_t bytes = op.count * common::dtype_size(op.dtype);
    if (bytes == 0) continue;
    if (op.kind == OpKind::kRecvReduce) {
      const auto [it, fresh] = target_of.try_emplace(op.ptr, i);
      if (!fresh) {
        call->views[i] = call->views[it->second];
        continue;
      }
    }
    void* view = t->device_ptr_to_host ? t->device_ptr_to_host(device_->native, op.ptr, bytes)
                                       : nullptr;
    if (!view) {
      call->staging[i] = std::make_unique_for_overwrite<std::byte[]>(bytes);
      view = call->staging[i].get();
      if (op.kind == OpKind::kSend) {
        if (xal_status_t s = broken(t->memcpy_dtoh(b.stream, view, op.ptr, bytes)); s) return s;
      } else {
        copy_out.push_back(i);
      }
    }
    call->views[i] = view;
  }
  auto copy_back = [&]() -> xal_status_t {
    for (size_t i : copy_out) {
      const P2pOp& op = b.ops[i];
      const size_t bytes = op.count * common::dtype_size(op.dtype);
      if (xal_status_t s = broken(t->memcpy_htod(b.stream, op.ptr, call->views[i], bytes)); s)
        return s;
    }
    return XAL_SUCCESS;
  };
  if (!t->stream_enqueue_host_func) {
    // No host functions: the step runs here, between synchronisations.
    if (xal_status_t s = broken(t->stream_synchronize(b.stream)); s) return s;
    call->run();
    if (xal_status_t s = copy_back(); s) return s;
    return broken(t->stream_synchronize(b.stream));
  }
  auto hold = std::make_unique<std::shared_ptr<Call>>(call);
  if (xal_status_t s = broken(t->stream_enqueue_host_func(b.stream, &run_call, hold.get())); s)
    return s;
  if (xal_status_t s = copy_back(); s) return s;
  // The step's host function reads `hold`; the last one frees it.
  if (xal_status_t s = broken(t->stream_enqueue_host_func(b.stream, &drop_call, hold.get())); s) {
    // Freed with `hold` once the stream has run the step.
    t->stream_synchronize(b.stream);
    return s;
  }
  static_cast<void>(hold.release());
  return XAL_SUCCESS;
}

}  // namespace xal::core
