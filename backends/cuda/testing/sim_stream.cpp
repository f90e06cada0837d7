// sim_stream.cpp -- simulated streams (a worker thread each, in order),
// events with host timestamps, host functions, context reset.
// SIMULATION ONLY.
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "sim_state.h"

namespace xalsim {

#define XALSIM_INJECT(name) \
  if (CUresult injected_ = injected(name); injected_ != CUDA_SUCCESS) \
    return injected_;
#define XALSIM_CONTEXT()                          \
  CUresult ctx_error_ = CUDA_SUCCESS;             \
  Context* ctx = context_for_call(&ctx_error_);   \
  if (ctx == nullptr) return ctx_error_;

Stream::~Stream() {
  if (worker.joinable()) abandon();
}

void Stream::run() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    cv.wait(lock, [this] { return stop || !queue.empty(); });
    if (queue.empty()) {  // stop requested and nothing left
      exited = true;
      return;
    }
    std::function<CUresult()> task = std::move(queue.front());
    queue.pop_front();
    busy = true;
    lock.unlock();
    const CUresult r = task();
    lock.lock();
    busy = false;
    if (r != CUDA_SUCCESS && error == CUDA_SUCCESS) error = r;
    if (is_sticky(r)) ctx->sticky = r;
    cv.notify_all();
  }
}

void Stream::push(std::function<CUresult()> task) {
  std::lock_guard<std::mutex> lock(mutex);
  queue.push_back(std::move(task));
  cv.notify_all();
}

CUresult Stream::drain() {
  std::unique_lock<std::mutex> lock(mutex);
  cv.wait(lock, [this] { return queue.empty() && !busy; });
  const CUresult r = error;
  if (!is_sticky(r)) error = CUDA_SUCCESS;
  return r;
}

void Stream::abandon() {
  stopping = true;
  {
    std::lock_guard<std::mutex> lock(mutex);
    queue.clear();
  }
  shutdown();
}

void Stream::retire() {
  std::lock_guard<std::mutex> lock(mutex);
  stop = true;
  cv.notify_all();
}

void Stream::shutdown() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stop = true;
    cv.notify_all();
  }
  if (worker.joinable()) worker.join();
}

Stream* find_stream(CUstream s, bool* ok) {
  if (s == nullptr) {
    *ok = true;
    return nullptr;
  }
  Stream* stream = reinterpret_cast<Stream*>(s);
  std::lock_guard<std::mutex> lock(driver().mutex);
  *ok = driver().streams.count(stream) != 0;
  return *ok ? stream : nullptr;
}

CUresult submit(CUstream s, std::function<CUresult()> task) {
  bool ok = false;
  Stream* stream = find_stream(s, &ok);
  if (!ok) return CUDA_ERROR_INVALID_HANDLE;
  if (stream == nullptr) return task();  // the null stream runs now
  stream->push(std::move(task));
  return CUDA_SUCCESS;
}

void reset_context(Context* ctx) {
  Driver& d = driver();
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    for (Stream* s : ctx->streams) {
      auto it = d.streams.find(s);
      streams.push_back(std::move(it->second));
      d.streams.erase(it);
    }
    ctx->streams.clear();
    for (auto& s : ctx->retired) streams.push_back(std::move(s));
    ctx->retired.clear();
  }
  // The real driver drops the work of a reset context's streams.
  for (const auto& s : streams) s->abandon();
  streams.clear();
  std::lock_guard<std::mutex> lock(d.mutex);
  for (Event* e : ctx->events) d.events.erase(e);
  ctx->events.clear();
  for (auto& [module, functions] : ctx->modules) {
    for (auto& f : functions) d.functions.erase(f.get());
    d.modules.erase(module);
  }
  ctx->modules.clear();
  // Page-locked memory goes with the context that made it: freed (a later
  // touch of it is a use after free, as on the real driver), registrations
  // dropped (the memory stays the caller's, pageable again).
  for (auto it = d.host_owner.begin(); it != d.host_owner.end();) {
    if (it->second != ctx) {
      ++it;
      continue;
    }
    if (d.host_allocations.erase(it->first) != 0) {
      std::free(reinterpret_cast<void*>(it->first));
    }
    d.host_registered.erase(it->first);
    it = d.host_owner.erase(it);
  }
  // Peer mappings go with the context, from it and to it.
  ctx->enabled_peers.clear();
  for (auto& other : d.contexts) other->enabled_peers.erase(ctx->device);
  for (auto it = d.allocations.begin(); it != d.allocations.end();) {
    if (it->second.device == ctx->device) {
      release_allocation(d, it->first, it->second);
      it = d.allocations.erase(it);
    } else {
      ++it;
    }
  }
  // XALSIM_CUDA_STICKY_SURVIVES_RESET=1: the context's sticky error stays,
  // as the real driver keeps some (700 and the like) until the process ends.
  const char* survives = std::getenv("XALSIM_CUDA_STICKY_SURVIVES_RESET");
  if (survives == nullptr || std::string(survives) != "1") ctx->sticky = CUDA_SUCCESS;
  ctx->sticky_kept_by_reset = ctx->sticky.load() != CUDA_SUCCESS;
}

void load_syncs(Context* ctx) {
  const char* v = std::getenv("XALSIM_CUDA_LOAD_SYNCS");
  if (v == nullptr || std::string(v) != "1") return;
  // Shared ownership keeps a stream alive if another thread destroys it.
  std::vector<std::shared_ptr<Stream>> streams;
  {
    std::lock_guard<std::mutex> lock(driver().mutex);
    for (Stream* s : ctx->streams) streams.push_back(driver().streams.at(s));
  }
  for (const auto& s : streams) {
    std::unique_lock<std::mutex> lock(s->mutex);
    s->cv.wait(lock, [&s] { return (s->queue.empty() && !s->busy) || s->stopping; });
  }
}

namespace {

CUresult sim_cuStreamCreate(CUstream* out, unsigned int flags) {
  XALSIM_INJECT("cuStreamCreate");
  XALSIM_CONTEXT();
  if (out == nullptr || flags > CU_STREAM_NON_BLOCKING) return CUDA_ERROR_INVALID_VALUE;
  auto stream = std::make_shared<Stream>();
  stream->ctx = ctx;
  stream->flags = flags;
  Stream* raw = stream.get();
  raw->worker = std::thread([raw] { raw->run(); });
  std::lock_guard<std::mutex> lock(driver().mutex);
  driver().streams.emplace(raw, std::move(stream));
  ctx->streams.insert(raw);
  *out = reinterpret_cast<CUstream>(raw);
  return CUDA_SUCCESS;
}

CUresult sim_cuStreamDestroy(CUstream s) {
  XALSIM_INJECT("cuStreamDestroy");
  XALSIM_CONTEXT();
  bool ok = false;
  Stream* stream = find_stream(s, &ok);
  if (!ok || stream == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // As the driver: the call returns at once, what is queued still runs.
  std::vector<std::shared_ptr<Stream>> finished;
  {
    std::lock_guard<std::mutex> lock(driver().mutex);
    auto it = driver().streams.find(stream);
    std::shared_ptr<Stream> owned = std::move(it->second);
    driver().streams.erase(it);
    Context* c = stream->ctx;
    c->streams.erase(stream);
    owned->retire();
    auto& retired = c->retired;
    for (auto r = retired.begin(); r != retired.end();) {
      if ((*r)->exited) {
        finished.push_back(std::move(*r));
        r = retired.erase(r);
      } else {
        ++r;
      }
    }
    retired.push_back(std::move(owned));
  }
  for (auto& f : finished) f->shutdown();  // joins (the worker has returned)
  return CUDA_SUCCESS;
}

CUresult sim_cuStreamSynchronize(CUstream s) {
  XALSIM_INJECT("cuStreamSynchronize");
  XALSIM_CONTEXT();
  bool ok = false;
  Stream* stream = find_stream(s, &ok);
  if (!ok) return CUDA_ERROR_INVALID_HANDLE;
  if (stream == nullptr) return CUDA_SUCCESS;
  const CUresult r = stream->drain();
  return ctx->sticky.load() != CUDA_SUCCESS ? ctx->sticky.load() : r;
}

CUresult sim_cuStreamQuery(CUstream s) {
  XALSIM_INJECT("cuStreamQuery");
  XALSIM_CONTEXT();
  bool ok = false;
  Stream* stream = find_stream(s, &ok);
  if (!ok) return CUDA_ERROR_INVALID_HANDLE;
  if (stream == nullptr) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> lock(stream->mutex);
  if (stream->error != CUDA_SUCCESS) return stream->error;
  return stream->queue.empty() && !stream->busy ? CUDA_SUCCESS
                                                : CUDA_ERROR_NOT_READY;
}

// The context of a live stream; an unknown handle is
// CUDA_ERROR_INVALID_HANDLE (the real driver may crash on one instead).
CUresult sim_cuStreamGetCtx(CUstream s, CUcontext* out) {
  XALSIM_INJECT("cuStreamGetCtx");
  XALSIM_CONTEXT();
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  bool ok = false;
  Stream* stream = find_stream(s, &ok);
  if (!ok) return CUDA_ERROR_INVALID_HANDLE;
  *out = reinterpret_cast<CUcontext>(stream != nullptr ? stream->ctx : ctx);
  return CUDA_SUCCESS;
}

CUresult sim_cuLaunchHostFunc(CUstream s, CUhostFn fn, void* user) {
  XALSIM_INJECT("cuLaunchHostFunc");
  XALSIM_CONTEXT();
  if (fn == nullptr) return CUDA_ERROR_INVALID_VALUE;
  // The real driver may run the host functions of a context's streams one
  // at a time on one thread ("may be serialized"): with
  // XALSIM_CUDA_SERIAL_HOST_FUNCS set, so does the simulation, and a host
  // function that waits for another stream's then waits forever. Read at
  // launch, on the caller's thread: a getenv on the stream's thread could
  // race with a test's setenv.
  const bool serial = std::getenv("XALSIM_CUDA_SERIAL_HOST_FUNCS") != nullptr;
  return submit(s, [ctx, fn, user, serial] {
    // As the real driver's: "the function will not be called in the event
    // of an error in the CUDA context" (cuLaunchHostFunc).
    if (const CUresult sticky = ctx->sticky.load(); sticky != CUDA_SUCCESS) return sticky;
    std::unique_lock<std::mutex> lock(ctx->host_function_mutex, std::defer_lock);
    if (serial) lock.lock();
    in_host_function = true;
    fn(user);
    in_host_function = false;
    return CUDA_SUCCESS;
  });
}

// Waits, in stream order, until the 32-bit word at addr (page-locked host
// memory, or device memory) meets the condition. The word is polled: the
// host thread that writes it is not known to the simulation.
CUresult sim_cuStreamWaitValue32(CUstream s, CUdeviceptr addr, cuuint32_t value,
                                 unsigned int flags) {
  XALSIM_INJECT("cuStreamWaitValue32");
  XALSIM_CONTEXT();
  if (addr == 0 || addr % 4 != 0 || flags > CU_STREAM_WAIT_VALUE_NOR) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  bool ok = false;
  Stream* stream = find_stream(s, &ok);
  if (!ok) return CUDA_ERROR_INVALID_HANDLE;
  auto holds = [addr, value, flags] {
    const uint32_t v = std::atomic_ref<uint32_t>(*reinterpret_cast<uint32_t*>(addr))
                           .load(std::memory_order_acquire);
    switch (flags) {
      case CU_STREAM_WAIT_VALUE_GEQ: return static_cast<int32_t>(v - value) >= 0;
      case CU_STREAM_WAIT_VALUE_EQ: return v == value;
      case CU_STREAM_WAIT_VALUE_AND: return (v & value) != 0;
      default: return ~(v | value) != 0;  // NOR
    }
  };
  // A wait gives up after an error in the context: the host thread that
  // would write the word may be waiting for a host function the driver no
  // longer calls (and may free the word).
  auto wait = [ctx, stream, holds] {
    for (int spins = 0;; ++spins) {
      if (stream != nullptr && stream->stopping) return CUDA_ERROR_CONTEXT_IS_DESTROYED;
      if (const CUresult sticky = ctx->sticky.load(); sticky != CUDA_SUCCESS) return sticky;
      if (holds()) break;
      if (spins < 50) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(10));
      }
    }
    return CUDA_SUCCESS;
  };
  if (stream == nullptr) return wait();
  stream->push(wait);
  return CUDA_SUCCESS;
}

Event* find_event(CUevent e) {
  Event* event = reinterpret_cast<Event*>(e);
  std::lock_guard<std::mutex> lock(driver().mutex);
  return driver().events.count(event) != 0 ? event : nullptr;
}

CUresult sim_cuEventCreate(CUevent* out, unsigned int flags) {
  XALSIM_INJECT("cuEventCreate");
  XALSIM_CONTEXT();
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  auto event = std::make_unique<Event>();
  event->ctx = ctx;
  event->timing = (flags & CU_EVENT_DISABLE_TIMING) == 0;
  std::lock_guard<std::mutex> lock(driver().mutex);
  Event* raw = event.get();
  driver().events.emplace(raw, std::move(event));
  ctx->events.insert(raw);
  *out = reinterpret_cast<CUevent>(raw);
  return CUDA_SUCCESS;
}

CUresult sim_cuEventDestroy(CUevent e) {
  XALSIM_INJECT("cuEventDestroy");
  XALSIM_CONTEXT();
  Event* event = find_event(e);
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  // Streams may still be about to signal it: wait for its last record.
  {
    std::unique_lock<std::mutex> lock(event->mutex);
    event->cv.wait(lock, [event] { return event->completed >= event->recorded; });
  }
  std::lock_guard<std::mutex> lock(driver().mutex);
  event->ctx->events.erase(event);
  driver().events.erase(event);
  return CUDA_SUCCESS;
}

CUresult sim_cuEventRecord(CUevent e, CUstream s) {
  XALSIM_INJECT("cuEventRecord");
  XALSIM_CONTEXT();
  Event* event = find_event(e);
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    generation = ++event->recorded;
  }
  return submit(s, [event, generation] {
    std::lock_guard<std::mutex> lock(event->mutex);
    event->when = Clock::now();
    if (event->completed < generation) event->completed = generation;
    event->cv.notify_all();
    return CUDA_SUCCESS;
  });
}

CUresult sim_cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags) {
  XALSIM_INJECT("cuStreamWaitEvent");
  XALSIM_CONTEXT();
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Event* event = find_event(e);
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t target = 0;
  {
    std::lock_guard<std::mutex> lock(event->mutex);
    target = event->recorded;
  }
  return submit(s, [event, target] {
    std::unique_lock<std::mutex> lock(event->mutex);
    event->cv.wait(lock, [&] { return event->completed >= target; });
    return CUDA_SUCCESS;
  });
}

CUresult sim_cuEventQuery(CUevent e) {
  XALSIM_INJECT("cuEventQuery");
  XALSIM_CONTEXT();
  Event* event = find_event(e);
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::lock_guard<std::mutex> lock(event->mutex);
  return event->completed >= event->recorded ? CUDA_SUCCESS
                                             : CUDA_ERROR_NOT_READY;
}

CUresult sim_cuEventSynchronize(CUevent e) {
  XALSIM_INJECT("cuEventSynchronize");
  XALSIM_CONTEXT();
  Event* event = find_event(e);
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::unique_lock<std::mutex> lock(event->mutex);
  const uint64_t target = event->recorded;
  event->cv.wait(lock, [&] { return event->completed >= target; });
  return ctx->sticky.load();
}

CUresult sim_cuEventElapsedTime(float* ms, CUevent a, CUevent b) {
  XALSIM_INJECT("cuEventElapsedTime");
  XALSIM_CONTEXT();
  Event* start = find_event(a);
  Event* end = find_event(b);
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (start == nullptr || end == nullptr || !start->timing || !end->timing) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  Clock::time_point t0, t1;
  {
    std::lock_guard<std::mutex> lock(start->mutex);
    if (start->recorded == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (start->completed < start->recorded) return CUDA_ERROR_NOT_READY;
    t0 = start->when;
  }
  {
    std::lock_guard<std::mutex> lock(end->mutex);
    if (end->recorded == 0) return CUDA_ERROR_INVALID_HANDLE;
    if (end->completed < end->recorded) return CUDA_ERROR_NOT_READY;
    t1 = end->when;
  }
  *ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
  return CUDA_SUCCESS;
}

}  // namespace

const std::vector<Symbol>& stream_symbols() {
  static const std::vector<Symbol> symbols = {
#define S(name) {#name, reinterpret_cast<void*>(&sim_##name)}
      S(cuStreamCreate), S(cuStreamDestroy), S(cuStreamSynchronize),
      S(cuStreamQuery), S(cuStreamGetCtx), S(cuLaunchHostFunc), S(cuStreamWaitValue32),
      S(cuEventCreate),
      S(cuEventDestroy), S(cuEventRecord), S(cuStreamWaitEvent),
      S(cuEventQuery), S(cuEventSynchronize), S(cuEventElapsedTime),
#undef S
  };
  return symbols;
}

}  // namespace xalsim

// The number of live streams (not destroyed) created with exactly `flags`
// (0: blocking, CU_STREAM_NON_BLOCKING), in every context. For tests.
extern "C" __attribute__((visibility("default"))) int xalsim_stream_count(unsigned flags) {
  xalsim::Driver& d = xalsim::driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  int count = 0;
  for (const auto& [raw, stream] : d.streams) count += stream->flags == flags ? 1 : 0;
  return count;
}
