// peer_comm.cpp -- native collectives without NCCL: peer copies and xal's
// embedded reduction kernels (kernels.h), in the table variant used when
// NCCL is absent and host functions run on xal's threads (host_funcs.h).
//
// Each rank's call queues a host function on the caller's stream. The k-th
// call of every rank meets the k-th call of every other (as NCCL pairs
// calls); the last to arrive runs the whole collective on the
// communicator's own streams, one per device, and waits for it, while every
// rank's stream waits for its host function. So the collective starts after
// the work queued before it on every rank's stream and ends before the work
// queued after it, and the caller never blocks.
//
// Failure semantics, as the core's own path: a rank that does not arrive
// within the timeout breaks the communicator (TIMEOUT, sticky); abort wakes
// every waiting rank (ABORTED, sticky); ranks that disagree on the call get
// COLLECTIVE_MISMATCH; a failed copy or kernel is the communicator's async
// error. Thread-safe: ranks may call from one thread or many.
//
// No memory is allocated or freed while a collective runs, nor in a host
// function at all: a free (and perhaps an allocation) waits for the
// device's streams, and the ranks' streams are the ones waiting. Scratch
// memory is allocated when a call is queued, on the caller's thread, and
// kept until the communicator goes; the last rank's comm_destroy waits for
// the queued calls, so that the communicator is freed on its thread.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backend.h"
#include "entries.h"
#include "kernels.h"
#include "xal_common/host_collective.hpp"
#include "xal_common/reduce.hpp"

namespace xal::cuda {

namespace {

using common::CollDesc;
using common::CollKind;

bool same_call(const CollDesc& a, const CollDesc& b) {
  return a.kind == b.kind && a.count == b.count && a.dtype == b.dtype && a.op == b.op &&
         a.root == b.root;
}

// The ranks of one comm_create.
class Clique {
 public:
  Clique(std::vector<xal_bdevice_s*> devices, uint32_t timeout_ms)
      : devices_(std::move(devices)), timeout_ms_(timeout_ms),
        streams_(devices_.size(), nullptr), scratch_(devices_.size()),
        next_call_(devices_.size(), 0) {}

  ~Clique() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (streams_[i] != nullptr) {
        stream_synchronize(streams_[i]);
        stream_destroy(streams_[i]);
      }
      for (xal_devptr_t p : scratch_[i].all) mem_free(devices_[i], p);
    }
  }

  // Makes rank's scratch memory at least `bytes` (the caller's thread, when
  // a call is queued). Earlier, smaller buffers stay allocated.
  xal_status_t reserve(uint32_t rank, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (scratch_[rank].bytes >= bytes) return XAL_SUCCESS;
    }
    xal_devptr_t p = 0;
    const size_t want = std::max(bytes, size_t{4096});
    if (xal_status_t s = mem_alloc(devices_[rank], want, &p); s != XAL_SUCCESS) return s;
    std::lock_guard<std::mutex> lock(mutex_);
    Scratch& sc = scratch_[rank];
    sc.all.push_back(p);
    if (want > sc.bytes) {
      sc.ptr = p;
      sc.bytes = want;
    }
    return XAL_SUCCESS;
  }

  // The communicator's own stream on each device.
  xal_status_t make_streams() {
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (xal_status_t s = stream_create(devices_[i], 0, &streams_[i]); s != XAL_SUCCESS) return s;
    }
    return XAL_SUCCESS;
  }

  uint32_t size() const { return static_cast<uint32_t>(devices_.size()); }
  uint32_t timeout_ms() const { return timeout_ms_; }

  // A call of `rank` is being queued: its sequence number (call order per
  // rank). It counts as in flight until call_ended(); calls in flight keep
  // the communicator from being freed.
  uint64_t queue_call(uint32_t rank) {
    std::lock_guard<std::mutex> lock(mutex_);
    ++in_flight_;
    return next_call_[rank]++;
  }
  void call_ended() {
    std::lock_guard<std::mutex> lock(mutex_);
    --in_flight_;
    cv_.notify_all();  // under the lock: the waiter may free us once it is released
  }

  // Whether every call ended within `ms` (the last comm_destroy).
  bool wait_calls(uint32_t ms) {
    std::unique_lock<std::mutex> lock(mutex_);
    return cv_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return in_flight_ == 0; });
  }
  xal_bdevice_s* device(uint32_t rank) const { return devices_[rank]; }
  xal_backend_s* backend() const { return devices_[0]->backend; }

  xal_status_t error() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }
  std::string error_message() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_message_;
  }

  void abort() { fail(XAL_ERROR_ABORTED, "the communicator was aborted"); }

  // Breaks the communicator with `status` (sticky), waking every waiting rank.
  void fail(xal_status_t status, const std::string& message) {
    std::lock_guard<std::mutex> lock(mutex_);
    fail_locked(status, message);
    cv_.notify_all();
  }

  // Rank `rank` reached call `seq` on its stream (a host function thread).
  void arrive(uint32_t rank, uint64_t seq, const CollDesc& desc, xal_devptr_t send,
              xal_devptr_t recv) {
    std::unique_lock<std::mutex> lock(mutex_);
    Call& call = calls_[seq];
    if (call.parts.empty()) {
      call.desc = desc;
      call.parts.resize(size());
    } else if (!same_call(call.desc, desc)) {
      call.mismatch = true;
    }
    call.parts[rank] = {send, recv};
    if (++call.arrived == size()) {
      if (error_ == XAL_SUCCESS && !call.mismatch) {
        lock.unlock();
        const xal_status_t s = run(call.desc, call.parts);
        lock.lock();
        if (s != XAL_SUCCESS) {
          fail_locked(s, std::string(common::coll_name(desc.kind)) + " failed on the device");
        }
      } else if (call.mismatch && error_ == XAL_SUCCESS) {
        fail_locked(XAL_ERROR_COLLECTIVE_MISMATCH,
                    std::string("the ranks disagree on call ") + std::to_string(seq) +
                        " (kind, count, dtype, op or root)");
      }
      call.done = true;
      cv_.notify_all();
    } else {
      auto finished = [&] { return call.done || error_ != XAL_SUCCESS; };
      if (timeout_ms_ == 0) {
        cv_.wait(lock, finished);
      } else if (!cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms_), finished)) {
        fail_locked(XAL_ERROR_TIMEOUT,
                    std::string(common::coll_name(desc.kind)) + ": not every rank arrived within " +
                        std::to_string(timeout_ms_) + " ms");
        cv_.notify_all();
      }
    }
    if (++call.left == size()) calls_.erase(seq);
  }

 private:
  struct Part {
    xal_devptr_t send = 0;
    xal_devptr_t recv = 0;
  };
  struct Call {
    CollDesc desc;
    std::vector<Part> parts;
    uint32_t arrived = 0;
    uint32_t left = 0;
    bool mismatch = false;
    bool done = false;
  };
  struct Scratch {
    xal_devptr_t ptr = 0;  // the largest, in use
    size_t bytes = 0;
    std::vector<xal_devptr_t> all;
  };

  void fail_locked(xal_status_t status, const std::string& message) {
    if (error_ != XAL_SUCCESS) return;  // the first error stays
    error_ = status;
    error_message_ = message;
  }

  // Rank's scratch memory of at least `bytes`, reserved when the call was
  // queued (reserve()). Called by the running collective.
  xal_status_t scratch(uint32_t rank, size_t bytes, xal_devptr_t* out) {
    std::lock_guard<std::mutex> lock(mutex_);
    const Scratch& s = scratch_[rank];
    if (s.bytes < bytes) return XAL_ERROR_INTERNAL;  // reserve() was skipped
    *out = s.ptr;
    return XAL_SUCCESS;
  }

  // dst (on rank `to`) = src (on rank `from`), on `to`'s stream.
  xal_status_t copy(uint32_t to, xal_devptr_t dst, uint32_t from, xal_devptr_t src, size_t bytes) {
    if (bytes == 0 || (to == from && dst == src)) return XAL_SUCCESS;
    return memcpy_peer(streams_[to], devices_[to], dst, devices_[from], src, bytes);
  }

  // acc (on rank `at`) op= every other rank's `src(r)`, through scratch.
  template <typename Src>
  xal_status_t reduce_into(uint32_t at, xal_devptr_t acc, const CollDesc& d, Src src) {
    const auto* kernels = static_cast<const xal_cuda_reduce_v1_t*>(
        kernels_extension(backend(), XAL_CUDA_REDUCE_EXTENSION));
    const size_t bytes = d.count * common::dtype_size(d.dtype);
    xal_devptr_t tmp = 0;
    if (xal_status_t s = scratch(at, bytes, &tmp); s != XAL_SUCCESS) return s;
    const xal_op_t op = d.op == XAL_OP_AVG ? XAL_OP_SUM : d.op;
    for (uint32_t r = 0; r < size(); ++r) {
      if (r == at) continue;
      if (xal_status_t s = copy(at, tmp, r, src(r), bytes); s != XAL_SUCCESS) return s;
      if (xal_status_t s = kernels->reduce(streams_[at], acc, tmp, d.count, d.dtype, op);
          s != XAL_SUCCESS)
        return s;
    }
    if (d.op == XAL_OP_AVG) {
      return kernels->scale(streams_[at], acc, d.count, d.dtype, static_cast<double>(size()));
    }
    return XAL_SUCCESS;
  }

  xal_status_t sync_all() {
    xal_status_t first = XAL_SUCCESS;
    for (xal_bstream_t* s : streams_) {
      const xal_status_t st = stream_synchronize(s);
      if (first == XAL_SUCCESS) first = st;
    }
    return first;
  }

  // The whole collective, every rank's buffers known; waits for it.
  xal_status_t run(const CollDesc& d, const std::vector<Part>& p) {
    const uint32_t n = size();
    const size_t es = common::dtype_size(d.dtype);
    const size_t bytes = d.count * es;
    xal_status_t s = XAL_SUCCESS;
    auto step = [&](xal_status_t st) {
      if (s == XAL_SUCCESS) s = st;
      return s == XAL_SUCCESS;
    };
    switch (d.kind) {
      case CollKind::kAllreduce:
      case CollKind::kReduce: {
        const uint32_t at = d.kind == CollKind::kReduce ? d.root : 0;
        if (step(copy(at, p[at].recv, at, p[at].send, bytes)) &&
            step(reduce_into(at, p[at].recv, d, [&](uint32_t r) { return p[r].send; })) &&
            d.kind == CollKind::kAllreduce && step(stream_synchronize(streams_[at]))) {
          for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
            step(copy(r, p[r].recv, at, p[at].recv, bytes));
          }
        }
        break;
      }
      case CollKind::kBroadcast:
        for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
          step(copy(r, p[r].recv, d.root, p[d.root].send, bytes));
        }
        break;
      case CollKind::kAllgather:
        for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
          for (uint32_t i = 0; i < n && s == XAL_SUCCESS; ++i) {
            step(copy(r, p[r].recv + i * bytes, i, p[i].send, bytes));
          }
        }
        break;
      case CollKind::kReduceScatter:
        for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
          const size_t seg = r * bytes;
          if (step(copy(r, p[r].recv, r, p[r].send + seg, bytes))) {
            step(reduce_into(r, p[r].recv, d, [&](uint32_t i) { return p[i].send + seg; }));
          }
        }
        break;
      case CollKind::kAlltoall: {
        // Every send buffer first to scratch: a rank's recv may be its send.
        std::vector<xal_devptr_t> staged(n, 0);
        for (uint32_t i = 0; i < n && s == XAL_SUCCESS; ++i) {
          if (step(scratch(i, n * bytes, &staged[i]))) {
            step(copy(i, staged[i], i, p[i].send, n * bytes));
          }
        }
        if (s == XAL_SUCCESS) step(sync_all());
        for (uint32_t r = 0; r < n && s == XAL_SUCCESS; ++r) {
          for (uint32_t i = 0; i < n && s == XAL_SUCCESS; ++i) {
            step(copy(r, p[r].recv + i * bytes, i, staged[i] + r * bytes, bytes));
          }
        }
        break;
      }
    }
    const xal_status_t synced = sync_all();
    return s != XAL_SUCCESS ? s : synced;
  }

  const std::vector<xal_bdevice_s*> devices_;
  const uint32_t timeout_ms_;
  std::vector<xal_bstream_t*> streams_;
  std::vector<Scratch> scratch_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::map<uint64_t, Call> calls_;
  std::vector<uint64_t> next_call_;
  uint64_t in_flight_ = 0;
  xal_status_t error_ = XAL_SUCCESS;
  std::string error_message_;
};

// One rank's communicator (xal_bcomm_t of this table variant). The ranks
// share the clique; queued calls hold a plain pointer to it, kept valid by
// the last comm_destroy waiting for them.
struct PeerComm {
  std::shared_ptr<Clique> clique;
  uint32_t rank = 0;
};

PeerComm* as_comm(xal_bcomm_t* comm) { return reinterpret_cast<PeerComm*>(comm); }

// A queued call: what the host function needs.
struct Job {
  Clique* clique = nullptr;
  uint32_t rank = 0;
  uint64_t seq = 0;
  CollDesc desc;
  xal_devptr_t send = 0;
  xal_devptr_t recv = 0;
};

void run_job(void* user) {
  std::unique_ptr<Job> job(static_cast<Job*>(user));
  Clique* clique = job->clique;
  clique->arrive(job->rank, job->seq, job->desc, job->send, job->recv);
  job.reset();
  clique->call_ended();  // the last use: the clique may be freed from here on
}

xal_status_t enqueue(xal_bcomm_t* handle, xal_bstream_t* stream, const CollDesc& d,
                     xal_devptr_t send, xal_devptr_t recv) {
  if (handle == nullptr || stream == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  PeerComm* comm = as_comm(handle);
  Clique& clique = *comm->clique;
  xal_backend_s* backend = clique.backend();
  return guarded(backend, [&]() -> xal_status_t {
    const char* name = common::coll_name(d.kind);
    if (stream->device != clique.device(comm->rank)) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            std::string("cuda: ") + name + ": the stream is not on rank " +
                                std::to_string(comm->rank) + "'s device");
    }
    std::string why;
    if (xal_status_t s = common::check_coll_dtype_op(d, &why); s)
      return backend->error(s, std::string("cuda: ") + name + ": " + why);
    if (d.root >= clique.size()) {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            std::string("cuda: ") + name + ": root " + std::to_string(d.root) +
                                " is out of range");
    }
    if (xal_status_t e = clique.error(); e != XAL_SUCCESS) {
      return backend->error(e, std::string("cuda: ") + name + ": " + clique.error_message());
    }
    // The scratch memory this rank's device needs for the call.
    const size_t bytes = d.count * common::dtype_size(d.dtype);
    size_t need = 0;
    if (d.kind == CollKind::kAllreduce && comm->rank == 0) need = bytes;
    if (d.kind == CollKind::kReduce && comm->rank == d.root) need = bytes;
    if (d.kind == CollKind::kReduceScatter) need = bytes;
    if (d.kind == CollKind::kAlltoall) need = bytes * clique.size();
    if (need > 0) {
      if (xal_status_t s = clique.reserve(comm->rank, need); s != XAL_SUCCESS) return s;
    }
    auto job = std::make_unique<Job>();
    job->clique = comm->clique.get();
    job->rank = comm->rank;
    job->seq = clique.queue_call(comm->rank);
    job->desc = d;
    job->send = send;
    job->recv = recv;
    if (xal_status_t s = stream_enqueue_host_func(stream, run_job, job.get()); s != XAL_SUCCESS) {
      // This rank's part of the call never comes, and its sequence number
      // is used: the other ranks would wait for it, and later calls pair
      // with the wrong ones. The communicator is broken, as NCCL's would be.
      clique.fail(s, std::string(name) + ": rank " + std::to_string(comm->rank) +
                         " could not queue its part");
      clique.call_ended();
      return s;
    }
    job.release();  // run_job owns it now
    return XAL_SUCCESS;
  });
}

}  // namespace

xal_status_t peer_comm_create(xal_bdevice_t* const* devices, uint32_t n,
                              const xal_bcomm_options_t* options, xal_bcomm_t** out_comms) {
  if (devices == nullptr || out_comms == nullptr || n == 0 || devices[0] == nullptr)
    return XAL_ERROR_INVALID_ARGUMENT;
  xal_backend_s* backend = devices[0]->backend;
  return guarded(backend, [&]() -> xal_status_t {
    if (!backend->host_func_threads) {
      return backend->error(XAL_ERROR_NOT_SUPPORTED,
                            "cuda: collectives without NCCL need host functions on xal's "
                            "threads (XAL_CUDA_HOST_FUNCS=thread)");
    }
    std::vector<xal_bdevice_s*> list(devices, devices + n);
    for (xal_bdevice_s* d : list) {
      if (d == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
      if (xal_status_t s = d->check_health(); s != XAL_SUCCESS) return s;
    }
    const uint32_t timeout = options != nullptr ? options->timeout_ms : 0;
    auto clique = std::make_shared<Clique>(std::move(list), timeout);
    if (xal_status_t s = clique->make_streams(); s != XAL_SUCCESS) return s;
    std::vector<std::unique_ptr<PeerComm>> comms;
    for (uint32_t r = 0; r < n; ++r) {
      comms.push_back(std::make_unique<PeerComm>(PeerComm{clique, r}));
    }
    for (uint32_t r = 0; r < n; ++r) {
      out_comms[r] = reinterpret_cast<xal_bcomm_t*>(comms[r].release());
    }
    return XAL_SUCCESS;
  });
}

xal_status_t peer_comm_destroy(xal_bcomm_t* comm) {
  if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  std::unique_ptr<PeerComm> owned(as_comm(comm));
  xal_backend_s* backend = owned->clique->backend();
  return guarded(backend, [&]() -> xal_status_t {
    std::shared_ptr<Clique> clique = std::move(owned->clique);
    owned.reset();
    if (clique.use_count() > 1) return XAL_SUCCESS;  // other ranks remain
    // The last rank: the queued calls end (done, timed out, or woken by an
    // abort) before the clique is freed here. Calls a device reset dropped
    // never end: then the clique is left allocated rather than freed under
    // a host function that might still run.
    const uint32_t wait_ms = std::max<uint32_t>(clique->timeout_ms(), 10000);
    if (!clique->wait_calls(wait_ms)) {
      clique->abort();
      if (!clique->wait_calls(1000)) {
        backend->log(XAL_LOG_WARNING,
                     "cuda: a destroyed communicator still has queued collectives that "
                     "never ran; its memory is left allocated");
        auto kept = std::make_unique<std::shared_ptr<Clique>>(std::move(clique));
        kept.release();  // left allocated on purpose
      }
    }
    return XAL_SUCCESS;
  });
}

xal_status_t peer_comm_abort(xal_bcomm_t* comm) {
  if (comm == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  as_comm(comm)->clique->abort();
  return XAL_SUCCESS;
}

xal_status_t peer_comm_get_async_error(xal_bcomm_t* comm, xal_status_t* out_error) {
  if (comm == nullptr || out_error == nullptr) return XAL_ERROR_INVALID_ARGUMENT;
  *out_error = as_comm(comm)->clique->error();
  return XAL_SUCCESS;
}

// Calls never block the caller, so a group needs nothing of its own.
xal_status_t peer_group_start(xal_backend_t*) { return XAL_SUCCESS; }
xal_status_t peer_group_end(xal_backend_t*) { return XAL_SUCCESS; }

xal_status_t peer_allreduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t count, xal_dtype_t dtype, xal_op_t op, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kAllreduce, count, dtype, op, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_broadcast(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t count, xal_dtype_t dtype, uint32_t root,
                            xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(CollKind::kBroadcast, count, dtype, XAL_OP_SUM, root);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_reduce(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                         xal_dtype_t dtype, xal_op_t op, uint32_t root, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kReduce, count, dtype, op, root);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_allgather(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                            size_t send_count, xal_dtype_t dtype, xal_bstream_t* stream) {
  const common::CollDesc d =
      common::coll_desc(CollKind::kAllgather, send_count, dtype, XAL_OP_SUM, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_reduce_scatter(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv,
                                 size_t recv_count, xal_dtype_t dtype, xal_op_t op,
                                 xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kReduceScatter, recv_count, dtype, op, 0);
  return enqueue(comm, stream, d, send, recv);
}

xal_status_t peer_alltoall(xal_bcomm_t* comm, xal_devptr_t send, xal_devptr_t recv, size_t count,
                           xal_dtype_t dtype, xal_bstream_t* stream) {
  const common::CollDesc d = common::coll_desc(CollKind::kAlltoall, count, dtype, XAL_OP_SUM, 0);
  return enqueue(comm, stream, d, send, recv);
}

}  // namespace xal::cuda
