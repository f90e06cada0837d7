#include "transport_comm.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "../host_memory.hpp"
#include "../stream_failures.hpp"
#include "comm_split.hpp"
#include "issue_order.hpp"
#include "p2p_rank.hpp"
#include "staging_buffer.hpp"
#include "transport_p2p.hpp"
#include "transport_step.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core {

namespace {

using common::CollDesc;
using common::CollError;
using common::CollKind;
using Clock = std::chrono::steady_clock;

// State the local ranks of one xal_comm_create_transport share: the
// transport, the layout, and a two-phase meeting of the local ranks.
class Shared {
 public:
  Shared(const xal_comm_transport_t& t, ProcessLayout layout, uint32_t timeout_ms)
      : transport_(t), layout_(std::move(layout)), timeout_ms_(timeout_ms),
        parts_(layout_.local()) {}
  ~Shared() {
    if (owns_ && transport_.release) transport_.release(transport_.user);
  }

  void adopt() { owns_ = true; }
  const ProcessLayout& layout() const { return layout_; }
  uint32_t timeout_ms() const { return timeout_ms_; }
  std::string description;

  // Local rank `i`'s part of its next call. Throws CollError.
  void run(uint32_t i, const common::HostPart& part) {
    std::unique_lock lock(mu_);
    // Once broken, parts_ is not touched: a leader still in its step (that
    // a rank gave up waiting for) may be reading it.
    if (error_ != XAL_SUCCESS) throw_broken(part.desc.kind);
    parts_[i] = part;
    const uint64_t gen = generation_;
    arrive(lock, i, Clock::now() + std::chrono::milliseconds(timeout_ms_));
    if (i == 0) {
      lock.unlock();
      StepResult r = run_transport_step(transport_, layout_, timeout_ms_, parts_, scratch_);
      lock.lock();
      result_ = std::move(r);
      if (result_.status != XAL_SUCCESS && result_.sticky) break_with(result_.status, result_.message);
      done_ = gen + 1;
      cv_.notify_all();
    } else {
      // The leader writes this rank's output: wait for it even after an
      // abort (the transport then returns at once). Its step may take up to
      // two transport calls.
      const auto deadline = Clock::now() + std::chrono::milliseconds(3ull * timeout_ms_ + 1000);
      while (done_ <= gen)
        if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && done_ <= gen) {
          break_with(XAL_ERROR_TIMEOUT, "timed out waiting for the local leader's step");
          break;
        }
    }
    if (done_ <= gen) throw_broken(part.desc.kind);
    if (result_.status != XAL_SUCCESS) {
      record(result_.status);
      throw CollError(result_.status, cat(common::coll_name(part.desc.kind), ": ", result_.message));
    }
  }

  void abort() { fail(XAL_ERROR_ABORTED, "the communicator was aborted (xal_comm_abort)"); }

  // Point-to-point and split (transport_p2p.hpp); set by create_transport_comms.
  std::shared_ptr<P2pShared> p2p;
  std::shared_ptr<SplitMeet> meet;
  const xal_comm_transport_t& transport() const { return transport_; }

  // Breaks the communicator with `status` (sticky) and aborts the
  // transport: every pending and later call fails.
  void fail(xal_status_t status, const std::string& message) {
    if (p2p) p2p->mailbox.break_with(status, message);
    {
      std::lock_guard lock(mu_);
      break_with(status, message);
    }
    if (transport_.abort) transport_.abort(transport_.user);
  }
  bool broken() {
    std::lock_guard lock(mu_);
    return error_ != XAL_SUCCESS;
  }

  void throw_if_broken(CollKind kind) {
    std::lock_guard lock(mu_);
    if (error_ != XAL_SUCCESS) throw_broken(kind);
  }

  void record(xal_status_t s) {
    std::lock_guard lock(async_mu_);
    if (async_error_ == XAL_SUCCESS) async_error_ = s;
  }
  xal_status_t async_error() {
    std::lock_guard lock(async_mu_);
    return async_error_;
  }

 private:
  // Every local rank arrives; the last one releases the others.
  void arrive(std::unique_lock<std::mutex>& lock, uint32_t i, Clock::time_point deadline) {
    if (error_ != XAL_SUCCESS) throw_broken(parts_[i].desc.kind);
    const uint64_t gen = generation_;
    if (++count_ == parts_.size()) {
      count_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    while (generation_ == gen) {
      if (error_ != XAL_SUCCESS) throw_broken(parts_[i].desc.kind);
      if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && generation_ == gen)
        break_with(XAL_ERROR_TIMEOUT, cat("timed out after ", timeout_ms_,
                                          " ms waiting for the other local ranks (seen from "
                                          "global rank ", layout_.base() + i, ")"));
    }
  }

  void break_with(xal_status_t s, const std::string& message) {  // mu_ held
    if (error_ == XAL_SUCCESS) {
      error_ = s;
      error_message_ = message;
    }
    record(s);
    cv_.notify_all();
  }

  [[noreturn]] void throw_broken(CollKind kind) {  // mu_ held
    throw CollError(error_, cat(common::coll_name(kind), ": ", error_message_));
  }

  const xal_comm_transport_t transport_;
  const ProcessLayout layout_;
  const uint32_t timeout_ms_;
  bool owns_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<common::HostPart> parts_;
  Scratch scratch_;  // the leader's (local rank 0), one step at a time
  size_t count_ = 0;
  uint64_t generation_ = 0;
  uint64_t done_ = 0;  // generation + 1 of the last finished step
  StepResult result_;
  xal_status_t error_ = XAL_SUCCESS;
  std::string error_message_;
  std::mutex async_mu_;
  xal_status_t async_error_ = XAL_SUCCESS;
};

// One local rank's part of a call. Holds the rank's turn (issue_order.hpp)
// when nothing of the call follows it on the stream.
struct Job {
  std::shared_ptr<Shared> shared;
  uint32_t local = 0;
  common::HostPart part;
  xal_bstream_t* stream = nullptr;  // the caller's: where a failure is reported
  IssueOrder::Turn turn;
};

// A failure is the communicator's async error (recorded by Shared) and the
// stream's, as on the hierarchical path.
void run_job(Job& job) noexcept {
  try {
    job.shared->run(job.local, job.part);
  } catch (const CollError& e) {
    note_stream_failure(job.stream, e.status(), e.what());
  } catch (...) {
    job.shared->record(XAL_ERROR_INTERNAL);
    note_stream_failure(job.stream, XAL_ERROR_INTERNAL,
                        cat(common::coll_name(job.part.desc.kind), ": the host step failed"));
  }
}

void run_job_host_func(void* user) noexcept {
  std::unique_ptr<Job> job(static_cast<Job*>(user));
  run_job(*job);
}

class TransportComm final : public CommImpl {
 public:
  TransportComm(DeviceObj* device, uint32_t local, std::shared_ptr<Shared> shared,
                HostMemory& host)
      : device_(device), local_(local), shared_(std::move(shared)), order_(order_hooks(shared_)),
        in_(host), out_(host),
        p2p_(device, shared_->layout().base() + local, this, shared_->p2p) {}
  ~TransportComm() override {
    device_->hdr.table->device_synchronize(device_->native);  // staging copies in flight
    clear_pending();
  }

  void adopt() { shared_->adopt(); }
  uint32_t path() const override { return XAL_COMM_PATH_MPI; }
  std::string description() const override { return shared_->description; }
  void* native() override { return nullptr; }
  xal_status_t abort() override {
    shared_->abort();
    return XAL_SUCCESS;
  }
  xal_status_t async_error(xal_status_t* out) override {
    *out = shared_->async_error();
    if (*out == XAL_SUCCESS) *out = shared_->p2p->error->get();
    return XAL_SUCCESS;
  }

  // Messages between processes go through the transport's send and recv
  // (NOT_SUPPORTED, before anything is queued, when it lacks them).
  xal_status_t p2p(std::span<const P2pOp> ops, StreamObj* st) override {
    const ProcessLayout& l = shared_->layout();
    const xal_comm_transport_t& t = shared_->transport();
    if (!t.send || !t.recv)
      for (const P2pOp& op : ops)
        if (l.process_of(op.peer) != l.me)
          return fail(device_, XAL_ERROR_NOT_SUPPORTED,
                      cat("point-to-point with rank ", op.peer, " of another process: the "
                          "transport has no send and recv (built against a header before "
                          "ABI 1.1)"));
    return p2p_.submit(ops, st);
  }
  xal_status_t split(const SplitArgs& args, xal_comm_t* out_comm) override {
    return shared_->meet->arrive_at(local_, args, out_comm);
  }

  xal_status_t allreduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt, xal_op_t op,
                         StreamObj* st) override {
    return submit({CollKind::kAllreduce, n, dt, op, 0}, s, r, st);
  }
  xal_status_t broadcast(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         uint32_t root, StreamObj* st) override {
    return submit({CollKind::kBroadcast, n, dt, XAL_OP_SUM, root}, s, r, st);
  }
  xal_status_t reduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt, xal_op_t op,
                      uint32_t root, StreamObj* st) override {
    return submit({CollKind::kReduce, n, dt, op, root}, s, r, st);
  }
  xal_status_t allgather(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         StreamObj* st) override {
    return submit({CollKind::kAllgather, n, dt, XAL_OP_SUM, 0}, s, r, st);
  }
  xal_status_t reduce_scatter(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                              xal_op_t op, StreamObj* st) override {
    return submit({CollKind::kReduceScatter, n, dt, op, 0}, s, r, st);
  }
  xal_status_t alltoall(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                        StreamObj* st) override {
    return submit({CollKind::kAlltoall, n, dt, XAL_OP_SUM, 0}, s, r, st);
  }

 private:
  xal_status_t backend_failed(xal_status_t s) { return fail_backend(device_->backend, device_, s); }

  void* host_view(xal_devptr_t ptr, size_t bytes) {
    const xal_backend_table_t* t = device_->hdr.table;
    return t->device_ptr_to_host ? t->device_ptr_to_host(device_->native, ptr, bytes) : nullptr;
  }

  xal_status_t submit(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv, StreamObj* st) {
    std::string why;
    if (xal_status_t s = common::check_coll_dtype_op(d, &why); s)
      return fail(device_, s, cat(common::coll_name(d.kind), ": ", why));
    try {
      shared_->throw_if_broken(d.kind);
    } catch (const CollError& e) {
      return fail(device_, e.status(), e.what());
    }
    auto work = [this, d, send, recv, stream = st->native] { return enqueue(d, send, recv, stream); };
    if (defer_to_group_end(this, work)) return XAL_SUCCESS;
    return work();
  }

  // A gate waits as long as a local rank waits for its leader's step, and
  // one that gives up breaks the communicator (issue_order.hpp).
  static IssueOrder::Hooks order_hooks(const std::shared_ptr<Shared>& shared) {
    IssueOrder::Hooks h;
    h.limit = std::chrono::milliseconds(3 * uint64_t{shared->timeout_ms()} + 1000);
    h.broken = [shared] { return shared->broken(); };
    h.on_stuck = [shared](const std::string& m) { shared->fail(XAL_ERROR_TIMEOUT, m); };
    return h;
  }

  // Queues the staging copies and the host step of one call on `stream`,
  // in the rank's issue order.
  xal_status_t enqueue(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                       xal_bstream_t* stream) {
    const xal_backend_table_t* t = device_->hdr.table;
    IssueOrder::Turn turn;
    if (xal_status_t s = order_.begin(t, stream, common::coll_name(d.kind), &turn); s)
      return backend_failed(s);
    const ProcessLayout& l = shared_->layout();
    const uint32_t rank = l.base() + local_;
    const size_t es = common::dtype_size(d.dtype);
    const size_t in_bytes = common::coll_in_elements(d, rank, l.size) * es;
    const size_t out_bytes = common::coll_out_elements(d, rank, l.size) * es;
    auto job = std::make_unique<Job>();
    job->shared = shared_;
    job->local = local_;
    job->part.desc = d;
    void* in = in_bytes ? host_view(send, in_bytes) : nullptr;
    if (in_bytes && !in) {
      if (!(in = in_.get(in_bytes))) return XAL_ERROR_OUT_OF_HOST_MEMORY;
      if (xal_status_t s = t->memcpy_dtoh(stream, in, send, in_bytes); s) return backend_failed(s);
    }
    void* out = out_bytes ? host_view(recv, out_bytes) : nullptr;
    const bool stage_out = out_bytes && !out;
    if (stage_out && !(out = out_.get(out_bytes))) return XAL_ERROR_OUT_OF_HOST_MEMORY;
    job->part.in = in;
    job->part.out = out;
    job->stream = stream;
    if (!stage_out) job->turn = std::move(turn);  // over with the host step
    if (t->stream_enqueue_host_func) {
      Job* raw = job.release();
      if (xal_status_t s = t->stream_enqueue_host_func(stream, run_job_host_func, raw); s) {
        std::unique_ptr<Job> back(raw);
        return backend_failed(s);
      }
    } else {
      // No host functions: run on the calling thread once the stream caught
      // up (each local rank then needs its own thread, or a group).
      if (xal_status_t s = t->stream_synchronize(stream); s) return backend_failed(s);
      run_job(*job);
    }
    if (!stage_out) return XAL_SUCCESS;
    if (xal_status_t s = t->memcpy_htod(stream, recv, out, out_bytes); s) return backend_failed(s);
    // Over once the copy back has read the staging buffer.
    if (!t->stream_enqueue_host_func)
      if (xal_status_t s = t->stream_synchronize(stream); s) return backend_failed(s);
    IssueOrder::finish_on_stream(t, stream, std::move(turn));
    return XAL_SUCCESS;
  }

  DeviceObj* device_;
  const uint32_t local_;
  std::shared_ptr<Shared> shared_;
  IssueOrder order_;
  StagingBuffer in_, out_;  // one call at a time: order_ keeps them so
  P2pRank p2p_;
};

}  // namespace

xal_status_t create_transport_comms(std::span<DeviceObj* const> devices, uint32_t timeout_ms,
                                    const xal_comm_transport_t& t,
                                    std::vector<std::unique_ptr<CommImpl>>& out) {
  Runtime* rt = runtime();
  if (!rt || !rt->host) return not_initialized();
  ProcessLayout layout;
  layout.me = t.process_rank;
  layout.ranks.assign(t.ranks_per_process, t.ranks_per_process + t.process_count);
  for (uint32_t r : layout.ranks) {
    layout.first.push_back(layout.size);
    layout.size += r;
  }
  auto shared = std::make_shared<Shared>(t, std::move(layout), timeout_ms);
  shared->description = cat("collectives across ", t.process_count, " processes (",
                            shared->layout().size, " ranks); ", devices.size(),
                            " local devices from global rank ", shared->layout().base());
  shared->p2p = make_transport_p2p(t, shared->layout(), timeout_ms);
  shared->meet = make_transport_split(t, devices, timeout_ms);
  out.clear();
  for (uint32_t i = 0; i < devices.size(); ++i)
    out.push_back(std::make_unique<TransportComm>(devices[i], i, shared, *rt->host));
  return XAL_SUCCESS;
}

void adopt_transport(CommImpl& any_of_them) { static_cast<TransportComm&>(any_of_them).adopt(); }

}  // namespace xal::core
