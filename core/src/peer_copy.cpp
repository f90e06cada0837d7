// Staged copies between backends.
#include "peer_copy.hpp"

#include <condition_variable>
#include <cstring>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "error.hpp"
#include "host_memory.hpp"
#include "stream_failures.hpp"

namespace xal::core {

struct PeerEngine::Job {
  DeviceObj* dst_device = nullptr;
  DeviceObj* src_device = nullptr;
  xal_devptr_t dst = 0, src = 0;
  size_t bytes = 0;
  xal_bstream_t* stream = nullptr;  // the ordering stream: where a failure is reported
  std::mutex mu;
  std::condition_variable cv;
  bool started = false;   // the ordering stream reached the copy
  bool finished = false;  // the copy is done (or failed)
  bool cancelled = false; // the ordering stream refused the gate
  xal_status_t status = XAL_SUCCESS;
  std::string message;    // why the copy failed
};

namespace {

using Job = PeerEngine::Job;

// Host copy between two host-addressable device memories; large copies are
// split over threads, as the backends' own copies are.
void host_copy(void* dst, const void* src, size_t bytes) {
  constexpr size_t kGrain = size_t{4} << 20;
  if (bytes < 2 * kGrain) {
    std::memmove(dst, src, bytes);
    return;
  }
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
  const size_t chunks = (bytes + kGrain - 1) / kGrain;
  tbb::parallel_for(tbb::blocked_range<size_t>(0, chunks),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t c = r.begin(); c != r.end(); ++c) {
                        const size_t off = c * kGrain;
                        std::memcpy(d + off, s + off, std::min(kGrain, bytes - off));
                      }
                    });
}

// The core's own stream on `d`, created on first use.
xal_bstream_t* staging_stream(DeviceObj* d, xal_status_t* status) {
  std::lock_guard lock(d->state->mu);
  if (!d->state->staging_stream) {
    xal_bstream_t* s = nullptr;
    *status = d->hdr.table->stream_create(d->native, XAL_STREAM_NON_BLOCKING, &s);
    if (*status != XAL_SUCCESS) return nullptr;
    d->state->staging_stream = s;
  }
  *status = XAL_SUCCESS;
  return d->state->staging_stream;
}

// Destroys the events on scope exit.
struct EventSet {
  const xal_backend_table_t* t = nullptr;
  xal_bevent_t* ev[PeerEngine::kBuffers] = {};
  ~EventSet() {
    for (auto* e : ev)
      if (e) t->event_destroy(e);
  }
};

// The copy itself, on the calling thread; returns when it is complete.
xal_status_t run_copy(Runtime& rt, Job& job) {
  DeviceObj* sd = job.src_device;
  DeviceObj* dd = job.dst_device;
  const xal_backend_table_t* st = sd->hdr.table;
  const xal_backend_table_t* dt = dd->hdr.table;
  void* sh = st->device_ptr_to_host ? st->device_ptr_to_host(sd->native, job.src, job.bytes) : nullptr;
  void* dh = dt->device_ptr_to_host ? dt->device_ptr_to_host(dd->native, job.dst, job.bytes) : nullptr;
  xal_status_t s = XAL_SUCCESS;
  if (sh && dh) {
    // Memories of two devices never overlap.
    host_copy(dh, sh, job.bytes);
    return XAL_SUCCESS;
  }
  if (sh) {
    xal_bstream_t* ds = staging_stream(dd, &s);
    if (!ds) return fail_backend(dd->backend, dd, s);
    if ((s = dt->memcpy_htod(ds, job.dst, sh, job.bytes)) != XAL_SUCCESS ||
        (s = dt->stream_synchronize(ds)) != XAL_SUCCESS)
      return fail_backend(dd->backend, dd, s);
    return XAL_SUCCESS;
  }
  if (dh) {
    xal_bstream_t* ss = staging_stream(sd, &s);
    if (!ss) return fail_backend(sd->backend, sd, s);
    if ((s = st->memcpy_dtoh(ss, dh, job.src, job.bytes)) != XAL_SUCCESS ||
        (s = st->stream_synchronize(ss)) != XAL_SUCCESS)
      return fail_backend(sd->backend, sd, s);
    return XAL_SUCCESS;
  }
  xal_bstream_t* ss = staging_stream(sd, &s);
  if (!ss) return fail_backend(sd->backend, sd, s);
  xal_bstream_t* ds = staging_stream(dd, &s);
  if (!ds) return fail_backend(dd->backend, dd, s);
  EventSet done;
  done.t = dt;
  for (auto*& e : done.ev)
    if ((s = dt->event_create(dd->native, XAL_EVENT_DISABLE_TIMING, &e)) != XAL_SUCCESS)
      return fail_backend(dd->backend, dd, s);
  void** buf = rt.peer->acquire_buffers();
  if (!buf) return XAL_ERROR_OUT_OF_HOST_MEMORY;
  struct Release {
    Runtime& rt;
    void** b;
    ~Release() { rt.peer->release_buffers(b); }
  } release{rt, buf};
  // On a failure the copies already queued may still read or write the
  // staging buffers: both streams are drained before the buffers go back
  // to the pool (declared after `release`, so it runs first).
  struct Drain {
    const xal_backend_table_t *st, *dt;
    xal_bstream_t *ss, *ds;
    bool armed = true;
    ~Drain() {
      if (!armed) return;
      st->stream_synchronize(ss);
      dt->stream_synchronize(ds);
      clear_pending();  // the failure's detail is already recorded
    }
  } drain{st, dt, ss, ds};
  const size_t chunk = PeerEngine::kChunk;
  size_t k = 0;
  for (size_t off = 0; off < job.bytes; off += chunk, ++k) {
    const size_t len = std::min(chunk, job.bytes - off);
    const size_t b = k % PeerEngine::kBuffers;
    // The htod that last read this buffer must be done before refilling it;
    // meanwhile the previous chunk's htod keeps running.
    if (k >= PeerEngine::kBuffers &&
        (s = dt->event_synchronize(done.ev[b])) != XAL_SUCCESS)
      return fail_backend(dd->backend, dd, s);
    if ((s = st->memcpy_dtoh(ss, buf[b], job.src + off, len)) != XAL_SUCCESS ||
        (s = st->stream_synchronize(ss)) != XAL_SUCCESS)
      return fail_backend(sd->backend, sd, s);
    if ((s = dt->memcpy_htod(ds, job.dst + off, buf[b], len)) != XAL_SUCCESS ||
        (s = dt->event_record(done.ev[b], ds)) != XAL_SUCCESS)
      return fail_backend(dd->backend, dd, s);
  }
  if ((s = dt->stream_synchronize(ds)) != XAL_SUCCESS)
    return fail_backend(dd->backend, dd, s);
  drain.armed = false;
  return XAL_SUCCESS;
}

// Host func on the ordering stream: lets the worker start, waits for it.
// A failed copy fails the stream (its next synchronize), as a backend's
// own failed copy does.
void gate(void* user) {
  // `user` holds a reference to the job, released here.
  std::unique_ptr<std::shared_ptr<Job>> ref(static_cast<std::shared_ptr<Job>*>(user));
  Job* job = ref->get();
  std::unique_lock lock(job->mu);
  job->started = true;
  job->cv.notify_all();
  job->cv.wait(lock, [&] { return job->finished; });
  if (job->status != XAL_SUCCESS && !job->cancelled)
    note_stream_failure(job->stream, job->status, job->message);
}

void wait_event_host(void* user);

struct WaitArgs {
  std::shared_ptr<SharedNativeEvent> event;  // alive until the wait ends
};

void wait_event_host(void* user) {
  std::unique_ptr<WaitArgs> args(static_cast<WaitArgs*>(user));
  args->event->table->event_synchronize(args->event->native);
  args.reset();  // may destroy the native event (its handle is gone)
  clear_pending();
}

}  // namespace

PeerEngine::PeerEngine(Runtime& rt) : rt_(rt) {}

// The staging buffers' memory belongs to HostMemory, which frees it.
PeerEngine::~PeerEngine() { drain(); }

void PeerEngine::launch(std::shared_ptr<Job> job) {
  std::lock_guard lock(mu_);
  reap();
  Worker w;
  w.job = job;
  Runtime* rt = &rt_;
  w.thread = std::thread([rt, job] {
    {
      std::unique_lock lock(job->mu);
      job->cv.wait(lock, [&] { return job->started; });
    }
    xal_status_t s = XAL_ERROR_ABORTED;
    bool cancelled;
    {
      std::lock_guard lock(job->mu);
      cancelled = job->cancelled;
    }
    if (!cancelled) {
      try {
        t_operation = "xal_memcpy_peer";
        s = run_copy(*rt, *job);
      } catch (...) {
        s = fail_exception();
      }
    }
    std::string message;
    if (s != XAL_SUCCESS && !cancelled) {
      xal_error_info_t info{};
      info.struct_size = sizeof info;
      xal_last_error(&info);
      message = cat("xal_memcpy_peer: the staged copy failed: ", info.message);
      log_message(XAL_LOG_ERROR,
                  cat("asynchronous peer copy failed: ", info.message).c_str());
    }
    std::lock_guard lock(job->mu);
    job->status = s;
    job->message = std::move(message);
    job->finished = true;
    job->cv.notify_all();
  });
  workers_.push_back(std::move(w));
}

// Joins the workers whose copy is finished (they no longer take mu_).
void PeerEngine::reap() noexcept {
  for (auto it = workers_.begin(); it != workers_.end();) {
    bool finished;
    {
      std::lock_guard lock(it->job->mu);
      finished = it->job->finished;
    }
    if (finished) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

// Joins every worker, outside mu_ (a running copy takes it for buffers).
// A copy whose stream never reached it is cancelled.
void PeerEngine::drain() noexcept {
  std::vector<Worker> all;
  {
    std::lock_guard lock(mu_);
    all.swap(workers_);
  }
  for (Worker& w : all) {
    {
      std::lock_guard lock(w.job->mu);
      if (!w.job->started) w.job->cancelled = true;
      w.job->started = true;
    }
    w.job->cv.notify_all();
    w.thread.join();
  }
}

void** PeerEngine::acquire_buffers() {
  std::lock_guard lock(mu_);
  if (!free_buffers_.empty()) {
    void** b = free_buffers_.back().release();
    free_buffers_.pop_back();
    return b;
  }
  auto set = std::make_unique<void*[]>(kBuffers);
  for (int i = 0; i < kBuffers; ++i) {
    set[i] = nullptr;
    if (rt_.host->allocate(kChunk, 0, &set[i]) != XAL_SUCCESS) {
      for (int j = 0; j < i; ++j) rt_.host->free(set[j]);
      return nullptr;
    }
  }
  return set.release();
}

void PeerEngine::release_buffers(void** buffers) noexcept {
  try {
    std::lock_guard lock(mu_);
    free_buffers_.emplace_back(buffers);
  } catch (...) {
    for (int i = 0; i < kBuffers; ++i) rt_.host->free(buffers[i]);
    std::unique_ptr<void*[]> drop(buffers);
  }
}

xal_status_t staged_peer_copy(StreamObj* stream, DeviceObj* dst_device,
                              xal_devptr_t dst, DeviceObj* src_device,
                              xal_devptr_t src, size_t bytes) {
  Runtime* rt = runtime();
  auto job = std::make_shared<Job>();
  job->dst_device = dst_device;
  job->src_device = src_device;
  job->dst = dst;
  job->src = src;
  job->bytes = bytes;
  job->stream = stream->native;
  const xal_backend_table_t* t = stream->hdr.table;
  if (t->stream_enqueue_host_func) {
    auto ref = std::make_unique<std::shared_ptr<Job>>(job);
    rt->peer->launch(job);
    const xal_status_t s = t->stream_enqueue_host_func(stream->native, &gate, ref.get());
    if (s == XAL_SUCCESS) {
      ref.release();  // owned by gate now
      return XAL_SUCCESS;
    }
    {
      std::lock_guard lock(job->mu);
      job->cancelled = true;
      job->started = true;
    }
    job->cv.notify_all();
    return fail_backend(stream->device->backend, stream->device, s);
  }
  const xal_status_t s = t->stream_synchronize(stream->native);
  if (s != XAL_SUCCESS)
    return fail_backend(stream->device->backend, stream->device, s);
  return run_copy(*rt, *job);
}

xal_status_t cross_backend_wait(StreamObj* stream, EventObj* event) {
  const xal_backend_table_t* t = stream->hdr.table;
  if (!t->stream_enqueue_host_func) {
    const xal_status_t s = event->hdr.table->event_synchronize(event->native);
    return s == XAL_SUCCESS ? s
                            : fail_backend(event->device->backend, event->device, s);
  }
  auto args = std::make_unique<WaitArgs>();
  {
    std::lock_guard lock(event->device->state->mu);
    if (!event->shared) {
      event->shared = std::make_shared<SharedNativeEvent>(event->hdr.table, event->native);
    }
    args->event = event->shared;
  }
  const xal_status_t s = t->stream_enqueue_host_func(stream->native, &wait_event_host, args.get());
  if (s != XAL_SUCCESS)
    return fail_backend(stream->device->backend, stream->device, s);
  args.release();  // owned by wait_event_host now
  return XAL_SUCCESS;
}

xal_status_t destroy_native_event(EventObj* event) noexcept {
  std::shared_ptr<SharedNativeEvent> shared;
  try {
    std::lock_guard lock(event->device->state->mu);
    shared.swap(event->shared);
  } catch (...) {
    // A mutex that cannot lock: treat the event as never waited on.
  }
  if (shared && shared.use_count() > 1) return XAL_SUCCESS;  // the last wait destroys it
  const xal_status_t s = event->hdr.table->event_destroy(event->native);
  if (s == XAL_SUCCESS) {
    if (shared) shared->native = nullptr;  // gone already
  } else if (shared) {
    try {
      std::lock_guard lock(event->device->state->mu);
      event->shared = std::move(shared);  // still the event's
    } catch (...) {
    }
  }
  return s;
}

}  // namespace xal::core
