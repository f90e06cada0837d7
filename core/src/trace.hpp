// XAL_TRACE=FILE: every API call and device operation as Chrome trace JSON
// (viewable in Perfetto). API calls are complete events on the calling
// thread's track; device operations are complete events on one track per
// stream, under one process per device, linked to their call by a flow and
// by args.call. Off (XAL_TRACE unset), entry() pays one relaxed load.
#pragma once

#include <atomic>
#include <cstdint>

#include "xal/xal.h"

namespace xal::core {

struct StreamObj;

// True between xal_init and xal_shutdown when XAL_TRACE names a writable file.
extern std::atomic<bool> g_trace_on;

inline bool trace_on() noexcept {
  return g_trace_on.load(std::memory_order_relaxed);
}

namespace trace {

// Nanoseconds on the steady clock. Thread-safe.
int64_t now_ns() noexcept;

// Starts a session when XAL_TRACE is set (called by xal_init, serialised by
// its lock): opens the file now. A file that cannot be opened is logged and
// leaves tracing off; it is never an error. `t0` is xal_init's start.
void start(int64_t t0) noexcept;
// The current session's number (0: none). Thread-safe.
uint64_t session() noexcept;
// Ends `session` (when it is the current one): tracing off, events merged
// and written, file closed. Also run at process exit. A child forked during
// a session traces nothing and writes nothing (the file is the parent's).
// Thread-safe.
void finish(uint64_t session) noexcept;
// Records a call that ran outside entry()'s tracing (xal_init). Thread-safe.
void record_call(const char* name, int64_t start, xal_status_t status) noexcept;

// The main arguments of a device operation (0 / -1: not given).
struct OpArgs {
  uint64_t bytes = 0;
  uint64_t count = 0;
  int32_t dtype = -1;
  int32_t op = -1;
  int64_t peer = -1;  // the other device of a peer copy or event wait
};

// What a traced call has noted so far (thread-local while it runs).
struct CallState {
  const char* name = nullptr;  // nullptr: no traced call
  int64_t start = 0;
  uint64_t id = 0;
  int64_t device = -1;
  int64_t stream = -1;
  OpArgs args;
};

// One traced API call on this thread (entry() makes it when tracing is on).
// Nested calls save and restore the outer call's state.
class Call {
 public:
  explicit Call(const char* name) noexcept;
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  // Records the call's complete event with its status.
  void finish(xal_status_t status) noexcept;

 private:
  CallState outer_;
};

// Notes arguments of the current call (no-ops outside a traced call).
void note_device_slow(uint32_t index, uint64_t bytes) noexcept;
inline void note_device(uint32_t index, uint64_t bytes = 0) noexcept {
  if (trace_on()) [[unlikely]] note_device_slow(index, bytes);
}
void note_stream(const StreamObj* stream) noexcept;

// A device operation the current call queued on `stream` (call after the
// backend accepted it): its completion is observed by a host function queued
// after it. Inside xal_group_start/end the host function is queued when the
// group ends. Thread-safe; never fails (a lost event counts as dropped).
void device_op(StreamObj* stream, const char* name, const OpArgs& args) noexcept;
// Same for a launch, named after the kernel.
void launch_op(StreamObj* stream, const char* kernel) noexcept;

// Stream lifetime: ids ("stream 3") are given at creation.
void stream_created(const StreamObj* stream) noexcept;
void stream_destroyed(const StreamObj* stream) noexcept;
// A stream released without xal_stream_destroy (device reset, shutdown):
// its track is forgotten, so that a stream made later in its handle slot
// gets a track of its own. Not noted on the current call. Thread-safe.
void stream_released(const StreamObj* stream) noexcept;

// Group calls on this thread (xal_group_start / xal_group_end succeeded).
void group_begin() noexcept;
void group_end() noexcept;

}  // namespace trace
}  // namespace xal::core
