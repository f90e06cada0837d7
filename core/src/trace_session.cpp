// The trace session: start at xal_init, per-thread buffers, and the merge
// and write at xal_shutdown or at exit.
#include "trace.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

#include "error.hpp"
#include "runtime.hpp"
#include "trace_state.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

std::atomic<bool> g_trace_on{false};

namespace trace {
namespace {

thread_local std::shared_ptr<Buffer> t_buffer;

uint64_t thread_id() {
  return static_cast<uint64_t>(::syscall(SYS_gettid));
}

// Whether this process is a child forked after the session started: its
// copy of the session is not its own (the file and its offset are shared
// with the parent, which writes the trace).
bool forked_child(const Tracer& t) {
  return t.pid.load(std::memory_order_relaxed) != static_cast<uint64_t>(::getpid());
}

void finish_locked(Tracer& t) {
  g_trace_on.store(false, std::memory_order_relaxed);
  const uint64_t ended = t.session.exchange(0);
  if (ended == 0) return;
  if (forked_child(t)) return;  // dropped unwritten; the parent writes it
  Meta meta;
  meta.host_pid = host_pid();
  meta.base = t.base;
  meta.dropped = t.dropped.load();
  meta.max_events = t.max_events.load();
  meta.processes[meta.host_pid] = cat("xal host (pid ", meta.host_pid, ")");
  for (const auto& [index, name] : t.devices)
    meta.processes[kDevicePidBase + index] = name;
  for (const auto& [device, id] : t.stream_names)
    meta.threads[{kDevicePidBase + device, id}] = cat("stream ", id);
  // Every thread's events, moved chunk by chunk into one store: the merge
  // holds little more than the events themselves.
  EventStore events(t.pool);
  try {
    for (const auto& b : t.buffers) {
      std::lock_guard lock(b->mu);
      const bool calls = std::any_of(b->events.begin(), b->events.end(),
                                     [&](const Event& e) { return e.pid == meta.host_pid; });
      if (calls)  // a thread that made calls (not only a backend's worker)
        meta.threads[{meta.host_pid, b->tid}] =
            b->tid == meta.host_pid ? std::string("main thread")
                                    : cat("thread ", b->tid);
      events.append_from(b->events);  // leaves b->events empty
    }
  } catch (...) {
    for (const auto& b : t.buffers) {  // nothing left for the next session
      std::lock_guard lock(b->mu);
      b->events.clear();
    }
    throw;
  }
  // Buffers of threads that have exited are only held here.
  std::erase_if(t.buffers, [](const auto& b) { return b.use_count() == 1; });
  t.tracks.clear();
  t.devices.clear();
  t.stream_names.clear();
  const size_t written = events.size();
  const bool ok = write_chrome_trace(t.file, meta, events);
  t.file.close();
  if (!ok || t.file.fail())
    log_message(XAL_LOG_ERROR,
                cat("XAL_TRACE: writing the trace to '", t.path,
                    "' failed (disk full?); the file is incomplete").c_str());
  else
    log_message(XAL_LOG_INFO, cat("XAL_TRACE: wrote ", written, " events to '",
                                  t.path, "'").c_str());
  if (meta.dropped)
    log_message(XAL_LOG_WARNING,
                cat("XAL_TRACE: dropped ", meta.dropped,
                    " events past XAL_TRACE_MAX_EVENTS=", t.max_events.load()).c_str());
}

// Run by exit(). A forked child drops the session without taking the lock,
// which a thread of the parent may have held at fork().
void finish_at_exit() {
  Tracer& t = tracer();
  if (t.session.load() == 0) return;
  if (forked_child(t)) {
    g_trace_on.store(false, std::memory_order_relaxed);
    t.session.store(0);
    return;
  }
  finish(session());
}

// Run in the child by fork(): tracing off there (atomics only).
void off_in_child() {
  g_trace_on.store(false, std::memory_order_relaxed);
  tracer().session.store(0);
}

}  // namespace

Tracer& tracer() {
  // Never destroyed: a forked child's exit() would otherwise flush, through
  // the file it shares with the parent, whatever part of the parent's trace
  // the stream's buffer held at fork(); and threads that end after exit()
  // began may still reach it.
  alignas(Tracer) static std::byte storage[sizeof(Tracer)];
  static Tracer* const t = std::construct_at(reinterpret_cast<Tracer*>(storage));
  return *t;
}

Buffer* buffer() {
  if (!t_buffer) {
    Tracer& t = tracer();
    auto b = std::make_shared<Buffer>(t.pool);
    b->tid = thread_id();
    std::lock_guard lock(t.mu);
    t.buffers.push_back(b);
    t_buffer = std::move(b);
  }
  return t_buffer.get();
}

void emit(Event&& e) noexcept {
  Tracer& t = tracer();
  const uint64_t max = t.max_events.load(std::memory_order_relaxed);
  if (t.count.fetch_add(1, std::memory_order_relaxed) >= max) {
    t.dropped.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    Buffer* b = buffer();
    std::lock_guard lock(b->mu);
    b->events.push_back(std::move(e));
  } catch (...) {
    t.dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

uint64_t host_pid() { return tracer().pid.load(std::memory_order_relaxed); }

int64_t now_ns() noexcept {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

uint64_t session() noexcept { return tracer().session.load(); }

void start(int64_t t0) noexcept {
  try {
    Tracer& t = tracer();
    std::lock_guard lock(t.mu);
    finish_locked(t);  // a session left by a racing shutdown
    const auto path = xal::common::env("XAL_TRACE");
    if (!path || path->empty()) return;
    uint64_t max = kDefaultMaxEvents;
    if (const auto m = xal::common::env("XAL_TRACE_MAX_EVENTS")) {
      const auto n = xal::common::parse_uint(xal::common::trim(*m));
      if (n && *n > 0)
        max = *n;
      else
        log_message(XAL_LOG_WARNING,
                    cat("XAL_TRACE_MAX_EVENTS='", *m, "' is not a positive "
                        "number; using ", kDefaultMaxEvents).c_str());
    }
    t.file = std::ofstream();
    t.file.open(*path, std::ios::out | std::ios::trunc | std::ios::binary);
    if (!t.file.is_open()) {
      const int err = errno;
      log_message(XAL_LOG_WARNING,
                  cat("XAL_TRACE: cannot write the trace to '", *path, "': ",
                      err ? std::strerror(err) : "open failed",
                      "; tracing is off").c_str());
      return;
    }
    t.path = *path;
    t.base = t0;
    t.max_events = max;
    t.count = 0;
    t.dropped = 0;
    static std::atomic<uint64_t> sessions{0};
    t.pid = static_cast<uint64_t>(::getpid());
    t.session = ++sessions;
    if (!t.atexit_registered) t.atexit_registered = std::atexit(&finish_at_exit) == 0;
    if (!t.atfork_registered)
      t.atfork_registered = ::pthread_atfork(nullptr, nullptr, &off_in_child) == 0;
    g_trace_on.store(true, std::memory_order_relaxed);
  } catch (...) {
    log_message(XAL_LOG_WARNING, "XAL_TRACE: cannot start tracing; tracing is off");
  }
}

void finish(uint64_t session) noexcept {
  try {
    Tracer& t = tracer();
    std::lock_guard lock(t.mu);
    if (session != 0 && session == t.session.load()) finish_locked(t);
  } catch (...) {
    log_message(XAL_LOG_ERROR, "XAL_TRACE: writing the trace failed");
  }
}

}  // namespace trace
}  // namespace xal::core
