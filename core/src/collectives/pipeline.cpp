#include "pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>

#include "../host_memory.hpp"
#include "../stream_failures.hpp"
#include "xal_common/reduce.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

namespace {

using common::CollDesc;
using common::CollKind;

constexpr size_t kDefaultChunkBytes = size_t{4} << 20;

bool elementwise(CollKind k) {
  return k == CollKind::kAllreduce || k == CollKind::kBroadcast || k == CollKind::kReduce;
}

// Blocks of a rank's input / output buffer: n for the layouts that put a
// block per rank there, else 1.
size_t in_blocks(CollKind k, uint32_t n) {
  return k == CollKind::kReduceScatter || k == CollKind::kAlltoall ? n : 1;
}
size_t out_blocks(CollKind k, uint32_t n) {
  return k == CollKind::kAllgather || k == CollKind::kAlltoall ? n : 1;
}

using Clock = std::chrono::steady_clock;

// The shared state of one call's chunks, kept alive by its host functions:
// destroyed (ending its ties) once the last of them has run.
struct Call {
  std::shared_ptr<Exchange> ex;
  uint32_t slot = 0;
  CollDesc desc;
  ChunkPlan plan;
  size_t es = 1;
  char* in_view = nullptr;  // host views of the whole buffers, or staging
  char* out_view = nullptr;
  std::array<void*, HostStep::kSlots> in_buf{}, out_buf{};
  std::chrono::milliseconds wait_limit{0};
  xal_bstream_t* stream = nullptr;  // the caller's: where a failure is reported
  CallTies ties;

  std::mutex mu;
  std::condition_variable cv;
  bool started = false, failed = false;
  size_t in_done = 0, host_done = 0, out_done = 0;
  Clock::time_point progress_at;  // when the call last started or moved on

  size_t in_bytes(size_t k) const {
    return common::coll_in_elements(plan.chunk(desc, k), slot, ex->rendezvous.size()) * es;
  }
  size_t out_bytes(size_t k) const {
    return common::coll_out_elements(plan.chunk(desc, k), slot, ex->rendezvous.size()) * es;
  }
  // Byte offset of chunk k in block 0 of a whole buffer.
  size_t offset(size_t k) const { return k * plan.elems * es; }
  // Calls copy(buffer offset, staging offset, bytes) for each piece of
  // chunk k of a side of `blocks` blocks and `bytes` bytes in all: piece b
  // is chunk k's range of block b, at b * bytes / blocks in the staging
  // buffer. Contiguous pieces (an unchunked call) make one copy.
  template <class Copy>
  xal_status_t pieces(size_t k, size_t blocks, size_t bytes, const Copy& copy) const {
    if (bytes == 0) return XAL_SUCCESS;
    const size_t piece = bytes / blocks;
    if (blocks == 1 || piece == desc.count * es) return copy(offset(k), size_t{0}, bytes);
    for (size_t b = 0; b < blocks; ++b)
      if (xal_status_t s = copy(b * desc.count * es + offset(k), b * piece, piece); s) return s;
    return XAL_SUCCESS;
  }

  // Fails the call: the communicator's async error, the group members
  // waiting for its outcome and, when `on_stream` (a failure inside the
  // stream rather than one returned by the call), the caller's stream.
  void fail(xal_status_t status, const std::string& message, bool on_stream = true) {
    ex->error->record(status);
    {
      std::lock_guard lock(mu);
      failed = true;
      cv.notify_all();
    }
    if (on_stream) note_stream_failure(stream, status, message);
    ties.report.fail(status, message);
  }
  bool is_failed() {
    std::lock_guard lock(mu);
    return failed;
  }
  // Runs chunk k at the rendezvous (skipped once the call failed).
  void run_chunk(size_t k) {
    if (is_failed()) return;
    const size_t j = k % HostStep::kSlots;
    common::HostPart part;
    part.desc = plan.chunk(desc, k);
    // A whole buffer's blocks lie desc.count apart; staging holds a chunk's
    // pieces back to back (stride 0: the chunk's count).
    if (in_bytes(k)) {
      part.in = in_view ? in_view + offset(k) : in_buf[j];
      part.in_stride = in_view ? desc.count : 0;
    }
    if (out_bytes(k)) {
      part.out = out_view ? out_view + offset(k) : out_buf[j];
      part.out_stride = out_view ? desc.count : 0;
    }
    try {
      ex->rendezvous.run(slot, part);
    } catch (const common::CollError& e) {
      fail(e.status(), e.what());
    } catch (...) {
      fail(XAL_ERROR_INTERNAL, cat(common::coll_name(desc.kind), ": the host step failed"));
    }
  }
  // Waits until `ready` holds (or the call failed). Before the call has
  // started on the caller's stream there is no limit (earlier work there is
  // the caller's), but a broken communicator ends the wait (the call's runs
  // then fail and report it). After that a wait past `wait_limit` without
  // progress fails the call with TIMEOUT rather than hang a stream.
  void wait(const std::function<bool()>& ready) {
    std::unique_lock lock(mu);
    const Clock::time_point began = Clock::now();
    while (!failed && !ready()) {
      if (!started) {
        lock.unlock();
        const bool broken = ex->rendezvous.error() != XAL_SUCCESS;
        lock.lock();
        if (broken) return;
        cv.wait_for(lock, IssueOrder::kPoll);
        continue;
      }
      const Clock::time_point deadline = std::max(began, progress_at) + wait_limit;
      if (Clock::now() >= deadline) {
        lock.unlock();
        fail(XAL_ERROR_TIMEOUT,
             cat(common::coll_name(desc.kind), ": timed out after ", wait_limit.count(),
                 " ms waiting for its staging copies"));
        return;
      }
      cv.wait_until(lock, deadline);
    }
  }
  template <class T>
  void set(T Call::*field, T value) {
    std::lock_guard lock(mu);
    this->*field = value;
    progress_at = Clock::now();
    cv.notify_all();
  }
};

void call_host_func(void* user) noexcept {
  std::unique_ptr<std::function<void()>> fn(static_cast<std::function<void()>*>(user));
  try {
    (*fn)();
  } catch (...) {
  }
}

}  // namespace

void AsyncError::record(xal_status_t status) {
  std::lock_guard lock(mu_);
  if (status_ == XAL_SUCCESS) status_ = status;
}

xal_status_t AsyncError::get() const {
  std::lock_guard lock(mu_);
  return status_;
}

CollDesc ChunkPlan::chunk(const CollDesc& d, size_t k) const {
  CollDesc c = d;
  if (chunks > 1) c.count = k + 1 < chunks ? elems : d.count - k * elems;
  return c;
}

ChunkPlan plan_chunks(const CollDesc& d, uint32_t n, size_t chunk_bytes) {
  if (chunk_bytes == 0 || n == 0) return ChunkPlan{1, d.count};
  // A layout collective's chunk is a range of every one of n blocks.
  const size_t per_elem = common::dtype_size(d.dtype) * (elementwise(d.kind) ? 1 : n);
  const size_t elems = std::max<size_t>(1, chunk_bytes / per_elem);
  // The last chunk always holds fewer than `elems` (see pipeline.hpp).
  return ChunkPlan{d.count / elems + 1, elems};
}

xal_status_t chunk_bytes_from_env(size_t* out) {
  *out = kDefaultChunkBytes;
  const auto v = common::env("XAL_COMM_CHUNK_BYTES");
  if (!v || v->empty()) return XAL_SUCCESS;
  std::string why;
  const auto n = common::parse_bytes(*v, &why);
  if (!n || *n > (uint64_t{1} << 40))
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("XAL_COMM_CHUNK_BYTES '", *v, "' is not a byte count up to 1 TiB",
                    why.empty() ? "" : cat(" (", why, ")")));
  *out = static_cast<size_t>(*n);
  return XAL_SUCCESS;
}

HostStep::HostStep(DeviceObj* device, HostMemory& host, size_t chunk_bytes)
    : device_(device), t_(device->hdr.table), chunk_bytes_(chunk_bytes) {
  for (auto& b : in_) b = std::make_unique<StagingBuffer>(host);
  for (auto& b : out_) b = std::make_unique<StagingBuffer>(host);
}

HostStep::~HostStep() {
  for (xal_bstream_t* s : {copy_in_, copy_out_})
    if (s) {
      t_->stream_synchronize(s);
      t_->stream_destroy(s);
    }
  clear_pending();
}

void* HostStep::host_view(xal_devptr_t ptr, size_t bytes) const {
  return t_->device_ptr_to_host ? t_->device_ptr_to_host(device_->native, ptr, bytes) : nullptr;
}

void HostStep::open_copy_streams() {
  if (tried_streams_) return;
  tried_streams_ = true;
  // Without them the copies share the caller's stream: chunked, not overlapped.
  if (!t_->stream_create || !t_->stream_destroy) return;
  // Non-blocking: no implicit tie to a legacy default stream, and HIP runs
  // the host functions of non-blocking streams concurrently (they wait for
  // each other here).
  constexpr uint32_t kFlags = XAL_STREAM_NON_BLOCKING;
  if (t_->stream_create(device_->native, kFlags, &copy_in_) != XAL_SUCCESS) copy_in_ = nullptr;
  if (t_->stream_create(device_->native, kFlags, &copy_out_) != XAL_SUCCESS) copy_out_ = nullptr;
  clear_pending();
}

xal_status_t HostStep::enqueue(const std::shared_ptr<Exchange>& ex, uint32_t slot,
                               const CollDesc& d, xal_devptr_t send, xal_devptr_t recv,
                               xal_bstream_t* stream, CallTies ties) {
  const uint32_t n = ex->rendezvous.size();
  auto call = std::make_shared<Call>();
  call->ties = std::move(ties);
  call->ex = ex;
  call->slot = slot;
  call->desc = d;
  call->plan = plan_chunks(d, n, chunk_bytes_);
  call->es = common::dtype_size(d.dtype);
  call->wait_limit = std::chrono::milliseconds(2 * uint64_t{ex->rendezvous.timeout_ms()} + 1000);
  call->stream = stream;
  const size_t total_in = common::coll_in_elements(d, slot, n) * call->es;
  const size_t total_out = common::coll_out_elements(d, slot, n) * call->es;
  call->in_view = total_in ? static_cast<char*>(host_view(send, total_in)) : nullptr;
  call->out_view = total_out ? static_cast<char*>(host_view(recv, total_out)) : nullptr;
  const bool stage_in = total_in && !call->in_view;
  const bool stage_out = total_out && !call->out_view;
  const size_t chunks = call->plan.chunks;
  // A failure to queue the call: returned (its detail set), and told to
  // the host functions already queued and to the group members waiting.
  auto refused = [&](xal_status_t s) {
    xal_error_info_t e{};
    e.struct_size = sizeof e;
    xal_last_error(&e);
    call->fail(s, e.message, false);
    return s;
  };
  auto failed = [&](xal_status_t s) { return refused(fail_backend(device_->backend, device_, s)); };
  for (size_t j = 0; j < kSlots && j < chunks; ++j) {
    if (stage_in && !(call->in_buf[j] = in_[j]->get(std::max<size_t>(call->in_bytes(j), 1))))
      return refused(XAL_ERROR_OUT_OF_HOST_MEMORY);
    if (stage_out && !(call->out_buf[j] = out_[j]->get(std::max<size_t>(call->out_bytes(j), 1))))
      return refused(XAL_ERROR_OUT_OF_HOST_MEMORY);
  }
  const size_t ib = in_blocks(d.kind, n), ob = out_blocks(d.kind, n);
  // Chunk k's device-to-host copies into staging slot j, and back.
  auto copy_in = [&](xal_bstream_t* s, size_t k, size_t j) {
    char* buf = static_cast<char*>(call->in_buf[j]);
    return call->pieces(k, ib, call->in_bytes(k), [&](size_t dev, size_t host, size_t bytes) {
      return t_->memcpy_dtoh(s, buf + host, send + dev, bytes);
    });
  };
  auto copy_out = [&](xal_bstream_t* s, size_t k, size_t j) {
    const char* buf = static_cast<const char*>(call->out_buf[j]);
    return call->pieces(k, ob, call->out_bytes(k), [&](size_t dev, size_t host, size_t bytes) {
      return t_->memcpy_htod(s, recv + dev, buf + host, bytes);
    });
  };

  if (!t_->stream_enqueue_host_func) {
    // Each chunk on the calling thread once its stream has caught up.
    for (size_t k = 0; k < chunks && !call->is_failed(); ++k) {
      const size_t j = k % kSlots;
      if (stage_in)
        if (xal_status_t s = copy_in(stream, k, j); s) return failed(s);
      if (xal_status_t s = t_->stream_synchronize(stream); s) return failed(s);
      call->run_chunk(k);
      if (stage_out)
        if (xal_status_t s = copy_out(stream, k, j); s) return failed(s);
    }
    // Over on return: the next call (maybe on another stream) refills the
    // staging buffers the last copy back reads.
    if (stage_out)
      if (xal_status_t s = t_->stream_synchronize(stream); s) return failed(s);
    return XAL_SUCCESS;
  }

  auto host = [&](xal_bstream_t* s, std::function<void()> fn) -> xal_status_t {
    auto owned = std::make_unique<std::function<void()>>(std::move(fn));
    if (xal_status_t st = t_->stream_enqueue_host_func(s, call_host_func, owned.get()); st)
      return st;
    owned.release();
    return XAL_SUCCESS;
  };
  if (!stage_in && !stage_out) {  // every chunk in one host function
    if (xal_status_t s = host(stream, [call, chunks] {
          for (size_t k = 0; k < chunks; ++k) call->run_chunk(k);
        }); s)
      return failed(s);
    return XAL_SUCCESS;
  }

  open_copy_streams();
  xal_bstream_t* in_s = copy_in_ ? copy_in_ : stream;
  xal_bstream_t* out_s = copy_out_ ? copy_out_ : stream;
  if (xal_status_t s = host(stream, [call] { call->set(&Call::started, true); }); s) return failed(s);
  for (size_t k = 0; k < chunks; ++k) {
    const size_t j = k % kSlots;
    const size_t reuse = k + 1 > kSlots ? k + 1 - kSlots : 0;  // chunk that used slot j
    if (stage_in) {
      if (xal_status_t s = host(in_s, [call, reuse] {
            call->wait([&] { return call->started && call->host_done >= reuse; });
          }); s)
        return failed(s);
      if (xal_status_t s = copy_in(in_s, k, j); s) return failed(s);
      if (xal_status_t s = host(in_s, [call, k] { call->set(&Call::in_done, k + 1); }); s)
        return failed(s);
    }
    if (xal_status_t s = host(stream, [call, k, reuse, stage_in, stage_out] {
          call->wait([&] {
            return (!stage_in || call->in_done >= k + 1) && (!stage_out || call->out_done >= reuse);
          });
          call->run_chunk(k);
          call->set(&Call::host_done, k + 1);
        }); s)
      return failed(s);
    if (stage_out) {
      if (xal_status_t s = host(out_s, [call, k] {
            call->wait([&] { return call->host_done >= k + 1; });
          }); s)
        return failed(s);
      if (xal_status_t s = copy_out(out_s, k, j); s) return failed(s);
      if (xal_status_t s = host(out_s, [call, k] { call->set(&Call::out_done, k + 1); }); s)
        return failed(s);
    }
  }
  if (stage_out)
    if (xal_status_t s = host(stream, [call, chunks] {
          call->wait([&] { return call->out_done >= chunks; });
        }); s)
      return failed(s);
  return XAL_SUCCESS;
}

}  // namespace xal::core
