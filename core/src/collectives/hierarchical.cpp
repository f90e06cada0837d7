#include "hierarchical.hpp"

#include <mutex>
#include <set>
#include <string>

#include "../host_memory.hpp"
#include "staging_buffer.hpp"
#include "xal_common/host_collective.hpp"
#include "xal_common/reduce.hpp"

namespace xal::core {

namespace {

using common::CollDesc;
using common::CollKind;

// State every rank of one xal_comm_create shares.
struct Shared {
  Shared(uint32_t n, uint32_t timeout_ms) : rendezvous(n, timeout_ms) {}

  // Keeps the first asynchronous error (a timeout, a mismatch, an abort).
  void record(xal_status_t status) {
    std::lock_guard lock(mu);
    if (async_error == XAL_SUCCESS) async_error = status;
  }

  common::Rendezvous rendezvous;
  std::mutex mu;
  xal_status_t async_error = XAL_SUCCESS;
  std::string description;
};

// One rank's part of one call, run by a host function on its stream.
struct Job {
  std::shared_ptr<Shared> shared;
  uint32_t rank = 0;
  common::HostPart part;
};

void run_job(Job& job) noexcept {
  try {
    job.shared->rendezvous.run(job.rank, job.part);
  } catch (const common::CollError& e) {
    job.shared->record(e.status());
  } catch (...) {
    job.shared->record(XAL_ERROR_INTERNAL);
  }
}

void run_job_host_func(void* user) noexcept {
  std::unique_ptr<Job> job(static_cast<Job*>(user));
  run_job(*job);
}

class HierComm final : public CommImpl {
 public:
  HierComm(DeviceObj* device, uint32_t rank, std::shared_ptr<Shared> shared, HostMemory& host)
      : device_(device), rank_(rank), shared_(std::move(shared)), in_(host), out_(host) {}

  ~HierComm() override {
    // Queued staging copies may still use the buffers: drain the device.
    device_->hdr.table->device_synchronize(device_->native);
    clear_pending();
  }

  uint32_t path() const override { return XAL_COMM_PATH_HIERARCHICAL; }
  std::string description() const override { return shared_->description; }
  void* native() override { return nullptr; }

  xal_status_t abort() override {
    shared_->rendezvous.abort();
    shared_->record(XAL_ERROR_ABORTED);
    return XAL_SUCCESS;
  }
  xal_status_t async_error(xal_status_t* out) override {
    std::lock_guard lock(shared_->mu);
    *out = shared_->async_error;
    return XAL_SUCCESS;
  }

  xal_status_t allreduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         xal_op_t op, StreamObj* st) override {
    return submit(make(CollKind::kAllreduce, n, dt, op, 0), s, r, st);
  }
  xal_status_t broadcast(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         uint32_t root, StreamObj* st) override {
    return submit(make(CollKind::kBroadcast, n, dt, XAL_OP_SUM, root), s, r, st);
  }
  xal_status_t reduce(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt, xal_op_t op,
                      uint32_t root, StreamObj* st) override {
    return submit(make(CollKind::kReduce, n, dt, op, root), s, r, st);
  }
  xal_status_t allgather(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                         StreamObj* st) override {
    return submit(make(CollKind::kAllgather, n, dt, XAL_OP_SUM, 0), s, r, st);
  }
  xal_status_t reduce_scatter(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                              xal_op_t op, StreamObj* st) override {
    return submit(make(CollKind::kReduceScatter, n, dt, op, 0), s, r, st);
  }
  xal_status_t alltoall(xal_devptr_t s, xal_devptr_t r, size_t n, xal_dtype_t dt,
                        StreamObj* st) override {
    return submit(make(CollKind::kAlltoall, n, dt, XAL_OP_SUM, 0), s, r, st);
  }

 private:
  static CollDesc make(CollKind kind, size_t count, xal_dtype_t dtype, xal_op_t op,
                       uint32_t root) {
    CollDesc d;
    d.kind = kind;
    d.count = count;
    d.dtype = dtype;
    d.op = op;
    d.root = root;
    return d;
  }

  xal_status_t backend_failed(xal_status_t s) { return fail_backend(device_->backend, device_, s); }

  // Host view of [ptr, ptr+bytes) when the backend exposes its memory.
  void* host_view(xal_devptr_t ptr, size_t bytes) {
    const xal_backend_table_t* t = device_->hdr.table;
    return t->device_ptr_to_host ? t->device_ptr_to_host(device_->native, ptr, bytes) : nullptr;
  }

  xal_status_t submit(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv, StreamObj* st) {
    const char* name = common::coll_name(d.kind);
    std::string why;
    const bool reduces = d.kind == CollKind::kAllreduce || d.kind == CollKind::kReduce ||
                         d.kind == CollKind::kReduceScatter;
    if (xal_status_t s = common::check_dtype_op(d.dtype, reduces ? d.op : XAL_OP_SUM, &why); s)
      return fail(device_, s, cat(name, ": ", why));
    try {
      shared_->rendezvous.throw_if_broken(d.kind);
    } catch (const common::CollError& e) {
      return fail(device_, e.status(), e.what());
    }
    // The rest queues work on the stream. Inside a group it runs at
    // xal_group_end, on a thread per rank (see defer_to_group_end).
    auto work = [this, d, send, recv, stream = st->native] { return enqueue(d, send, recv, stream); };
    if (defer_to_group_end(this, work)) return XAL_SUCCESS;
    return work();
  }

  // Queues the staging copies and the host step of one call on `stream`.
  xal_status_t enqueue(const CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                       xal_bstream_t* stream) {
    const uint32_t n = shared_->rendezvous.size();
    const size_t es = common::dtype_size(d.dtype);
    const size_t in_bytes = common::coll_in_elements(d, rank_, n) * es;
    const size_t out_bytes = common::coll_out_elements(d, rank_, n) * es;
    const xal_backend_table_t* t = device_->hdr.table;

    auto job = std::make_unique<Job>();
    job->shared = shared_;
    job->rank = rank_;
    job->part.desc = d;
    void* in = in_bytes ? host_view(send, in_bytes) : nullptr;
    if (in_bytes && !in) {  // stage the input through host memory
      if (!(in = in_.get(in_bytes))) return XAL_ERROR_OUT_OF_HOST_MEMORY;
      if (xal_status_t s = t->memcpy_dtoh(stream, in, send, in_bytes); s) return backend_failed(s);
    }
    void* out = out_bytes ? host_view(recv, out_bytes) : nullptr;
    const bool stage_out = out_bytes && !out;
    if (stage_out && !(out = out_.get(out_bytes))) return XAL_ERROR_OUT_OF_HOST_MEMORY;
    job->part.in = in;
    job->part.out = out;

    if (t->stream_enqueue_host_func) {
      Job* raw = job.release();
      if (xal_status_t s = t->stream_enqueue_host_func(stream, run_job_host_func, raw); s) {
        std::unique_ptr<Job> back(raw);
        return backend_failed(s);
      }
    } else {
      // No host functions: run this rank's part on the calling thread once
      // its stream has caught up (each rank then needs its own thread, or
      // a group).
      if (xal_status_t s = t->stream_synchronize(stream); s) return backend_failed(s);
      run_job(*job);
    }
    if (stage_out)
      if (xal_status_t s = t->memcpy_htod(stream, recv, out, out_bytes); s) return backend_failed(s);
    return XAL_SUCCESS;
  }

  DeviceObj* device_;
  const uint32_t rank_;
  std::shared_ptr<Shared> shared_;
  StagingBuffer in_, out_;
};

}  // namespace

xal_status_t create_hierarchical_comms(std::span<DeviceObj* const> devices, uint32_t timeout_ms,
                                       std::vector<std::unique_ptr<CommImpl>>& out) {
  Runtime* rt = runtime();
  if (!rt || !rt->host) return not_initialized();
  const auto n = static_cast<uint32_t>(devices.size());
  auto shared = std::make_shared<Shared>(n, timeout_ms);
  std::set<std::string> names;
  for (DeviceObj* d : devices) names.insert(d->backend->name);
  std::string list;
  for (const std::string& s : names) list += (list.empty() ? "" : ", ") + s;
  shared->description = cat("core collectives through host memory over ", n,
                            " devices of backend(s) ", list);
  out.clear();
  for (uint32_t i = 0; i < n; ++i)
    out.push_back(std::make_unique<HierComm>(devices[i], i, shared, *rt->host));
  return XAL_SUCCESS;
}

}  // namespace xal::core
