// Traced API calls and device operations (completion observed by a host
// function queued on the stream after the operation).
#include "trace.hpp"

#include <algorithm>

#include "error.hpp"
#include "runtime.hpp"
#include "trace_state.hpp"

namespace xal::core {
namespace trace {
namespace {

thread_local CallState t_call;
thread_local int t_group = 0;
thread_local std::vector<std::unique_ptr<PendingOp>> t_group_ops;

std::string device_name(const DeviceObj* d) {
  std::string name = cat("device ", d->index, ": ", d->backend->name);
  xal_device_properties_t p{};
  p.struct_size = sizeof p;
  if (d->hdr.table->device_get_properties(d->native, &p) == XAL_SUCCESS) {
    p.name[sizeof p.name - 1] = 0;
    name += cat(" ", p.name);
  } else {
    clear_pending();
  }
  return name;
}

// The track of `s`, made on first use (streams made before the session).
std::shared_ptr<Track> track_for(const StreamObj* s) {
  Tracer& t = tracer();
  std::lock_guard lock(t.mu);
  auto& slot = t.tracks[s];
  if (!slot) {
    auto track = std::make_shared<Track>();
    track->id = ++t.next_stream;
    track->device = s->device->index;
    if (!t.devices.count(track->device))
      t.devices[track->device] = device_name(s->device);
    t.stream_names.insert({track->device, track->id});
    slot = std::move(track);
  }
  return slot;
}

// Records the operation's complete event and the end of its flow.
void complete(PendingOp& op, bool observed) noexcept {
  const int64_t now = now_ns();
  int64_t start, end;
  {
    std::lock_guard lock(op.track->mu);
    start = std::max(op.submit, op.track->last_end);
    end = observed ? std::max(now, start) : start;
    op.track->last_end = end;
  }
  if (!trace_on() || op.session != tracer().session.load()) return;
  try {
    Event e;
    e.pid = kDevicePidBase + op.track->device;
    e.tid = op.track->id;
    e.ts = start;
    e.dur = end - start;
    e.name = op.name;
    e.owned_name = std::move(op.owned_name);
    e.call = op.call;
    e.device = op.track->device;
    e.stream = static_cast<int64_t>(op.track->id);
    e.args = op.args;
    if (!observed) e.detail = "completion not observed (no host functions)";
    Event f;
    f.ph = 'f';
    f.pid = e.pid;
    f.tid = e.tid;
    f.ts = start;
    f.name = "call";
    f.id = op.flow;
    emit(std::move(e));
    if (op.flow) emit(std::move(f));
  } catch (...) {
    tracer().dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void op_done(void* user) {
  std::unique_ptr<PendingOp> op(static_cast<PendingOp*>(user));
  complete(*op, true);
}

// Queues the host function that observes `op`'s completion.
void enqueue(std::unique_ptr<PendingOp> op) noexcept {
  StreamObj* s = op->stream;
  const auto fn = s->hdr.table->stream_enqueue_host_func;
  if (fn) {
    PendingOp* raw = op.release();
    if (fn(s->native, &op_done, raw) == XAL_SUCCESS) return;
    op.reset(raw);
    clear_pending();
  }
  complete(*op, false);
}

}  // namespace

void record_call(const char* name, int64_t start, xal_status_t status) noexcept {
  if (!trace_on()) return;
  Call call(name);
  t_call.start = start;
  call.finish(status);
}

Call::Call(const char* name) noexcept : outer_(t_call) {
  t_call = CallState{};
  t_call.name = name;
  t_call.start = now_ns();
  t_call.id = ++tracer().next_call;
}

Call::~Call() { t_call = outer_; }

void Call::finish(xal_status_t status) noexcept {
  try {
    const CallState& c = t_call;
    Event e;
    e.pid = host_pid();
    e.tid = buffer()->tid;
    e.ts = c.start;
    e.dur = now_ns() - c.start;
    e.name = c.name;
    e.call = c.id;
    e.status = status;
    e.device = c.device;
    e.stream = c.stream;
    e.args = c.args;
    if (status < 0) {
      xal_error_info_t info{};
      info.struct_size = sizeof info;
      if (xal_last_error(&info) == XAL_SUCCESS && info.status == status)
        e.detail = info.message;
    }
    emit(std::move(e));
  } catch (...) {
    tracer().dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void note_device_slow(uint32_t index, uint64_t bytes) noexcept {
  if (!t_call.name) return;
  t_call.device = index;
  if (bytes) t_call.args.bytes = bytes;
}

void note_stream(const StreamObj* stream) noexcept {
  if (!t_call.name || !trace_on()) return;
  try {
    const auto track = track_for(stream);
    t_call.stream = static_cast<int64_t>(track->id);
    t_call.device = track->device;
  } catch (...) {
  }
}

namespace {

void queue_op(StreamObj* stream, const char* name, std::string owned_name,
              const OpArgs& args) {
  Tracer& t = tracer();
  auto op = std::make_unique<PendingOp>();
  op->session = t.session.load();
  op->track = track_for(stream);
  op->stream = stream;
  op->submit = t_call.name ? t_call.start : now_ns();
  op->name = name;
  op->owned_name = std::move(owned_name);
  op->args = args;
  op->call = t_call.name ? t_call.id : 0;
  op->flow = ++t.next_flow;
  if (t_call.name) {
    t_call.stream = static_cast<int64_t>(op->track->id);
    t_call.device = op->track->device;
    t_call.args = args;
  }
  Event s;
  s.ph = 's';
  s.pid = host_pid();
  s.tid = buffer()->tid;
  s.ts = op->submit;  // the flow runs from the call to the operation
  s.name = "call";
  s.id = op->flow;
  emit(std::move(s));
  if (t_group > 0)
    t_group_ops.push_back(std::move(op));
  else
    enqueue(std::move(op));
}

}  // namespace

void device_op(StreamObj* stream, const char* name, const OpArgs& args) noexcept {
  if (!trace_on()) return;
  try {
    queue_op(stream, name, {}, args);
  } catch (...) {
    tracer().dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void launch_op(StreamObj* stream, const char* kernel) noexcept {
  if (!trace_on()) return;
  try {
    queue_op(stream, "launch", cat("launch ", kernel), OpArgs{});
  } catch (...) {
    tracer().dropped.fetch_add(1, std::memory_order_relaxed);
  }
}

void stream_created(const StreamObj* stream) noexcept { note_stream(stream); }

void stream_destroyed(const StreamObj* stream) noexcept {
  if (!trace_on()) return;
  note_stream(stream);
  Tracer& t = tracer();
  std::lock_guard lock(t.mu);
  t.tracks.erase(stream);
}

void stream_released(const StreamObj* stream) noexcept {
  try {
    Tracer& t = tracer();
    std::lock_guard lock(t.mu);
    t.tracks.erase(stream);
  } catch (...) {
  }
}

void group_begin() noexcept { ++t_group; }

void group_end() noexcept {
  if (t_group > 0 && --t_group > 0) return;
  auto ops = std::move(t_group_ops);
  t_group_ops.clear();
  for (auto& op : ops) enqueue(std::move(op));
}

}  // namespace trace
}  // namespace xal::core
