#include "fake_target.hpp"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace xal::fault::testing {
namespace {

constexpr uint32_t kDevices = 2;

struct FakeStream;
struct FakeComm;
struct FakeDevice {
  std::mutex mutex;
  std::set<uint8_t*> allocations;
  std::set<FakeStream*> streams;  // owned; freed by destroy, reset, shutdown
  std::set<FakeComm*> comms;      // owned; freed by destroy, shutdown
};
void free_comms(FakeDevice& d);
void abort_comms(FakeDevice& d);
struct FakeBackend {
  FakeDevice devices[kDevices];
};
// In the queued fake, a stream's work waits in `queue` until a sync (or
// destroy) of the stream or its device runs it; otherwise it runs at once.
struct FakeStream {
  FakeDevice* device;
  std::mutex mutex;
  std::vector<std::function<void()>> queue;
  void run() {
    std::vector<std::function<void()>> work;
    {
      std::lock_guard lock(mutex);
      work.swap(queue);
    }
    for (auto& w : work) w();
  }
};
struct FakeEvent {
  FakeDevice* device;
};

std::atomic<int> g_resets{0};
std::atomic<int> g_stream_destroys{0};
std::atomic<int> g_event_destroys{0};
std::atomic<int> g_comm_destroys{0};
std::atomic<int> g_failing_destroys{0};
std::atomic<const void*> g_last_destroyed{nullptr};
std::atomic<int> g_stream_syncs{0};
std::atomic<int> g_host_allocations{0};
bool g_queued = false;
thread_local uint32_t t_group_depth = 0;
thread_local std::vector<std::pair<FakeStream*, std::function<void()>>> t_grouped;
std::mutex g_reports_mutex;
std::map<xal_status_t, int> g_reports;  // guarded by g_reports_mutex
FakeKind g_kind = FakeKind::full;
const xal_backend_services_t* g_services = nullptr;

// Runs `work` now, or (queued fake) when `s` is synchronised.
xal_status_t on_stream(xal_bstream_t* s, std::function<void()> work) {
  auto* st = reinterpret_cast<FakeStream*>(s);
  if (!g_queued) {
    work();
    return XAL_SUCCESS;
  }
  std::lock_guard lock(st->mutex);
  st->queue.push_back(std::move(work));
  return XAL_SUCCESS;
}

// A destroy that fails (fail_next_destroys): the object stays.
bool destroy_fails(const void* native) {
  g_last_destroyed = native;
  int n = g_failing_destroys.load();
  while (n > 0 && !g_failing_destroys.compare_exchange_weak(n, n - 1)) {
  }
  return n > 0;
}

xal_status_t f_init(const xal_backend_init_args_t* args, xal_backend_t** out) {
  g_services = args->services;
  *out = reinterpret_cast<xal_backend_t*>(std::make_unique<FakeBackend>().release());
  return XAL_SUCCESS;
}
xal_status_t f_shutdown(xal_backend_t* b) {
  auto* fb = reinterpret_cast<FakeBackend*>(b);
  for (auto& d : fb->devices) {
    for (auto* p : d.allocations) std::free(p);
    for (auto* st : d.streams) std::unique_ptr<FakeStream> owned(st);
    free_comms(d);
  }
  std::unique_ptr<FakeBackend> owned(fb);
  return XAL_SUCCESS;
}
xal_status_t f_describe(xal_backend_t*, xal_backend_describe_t* d) {
  std::strcpy(d->name, "fake");
  std::strcpy(d->driver_version, "fake 1.0");
  d->flags = XAL_BACKEND_FLAG_SIMULATED;
  return XAL_SUCCESS;
}
xal_status_t f_device_count(xal_backend_t*, uint32_t* n) {
  *n = kDevices;
  return XAL_SUCCESS;
}
xal_status_t f_device_get(xal_backend_t* b, uint32_t i, xal_bdevice_t** out) {
  *out = reinterpret_cast<xal_bdevice_t*>(
      &reinterpret_cast<FakeBackend*>(b)->devices[i]);
  return XAL_SUCCESS;
}
xal_status_t f_props(xal_bdevice_t*, xal_device_properties_t* p) {
  std::strcpy(p->name, "Fake device");
  p->memory_bytes = 1 << 30;
  return XAL_SUCCESS;
}
xal_status_t f_device_sync(xal_bdevice_t* d) {
  auto* fd = reinterpret_cast<FakeDevice*>(d);
  std::vector<FakeStream*> streams;
  {
    std::lock_guard lock(fd->mutex);
    streams.assign(fd->streams.begin(), fd->streams.end());
  }
  for (auto* st : streams) st->run();
  return XAL_SUCCESS;
}
xal_status_t f_reset(xal_bdevice_t* d) {
  auto* fd = reinterpret_cast<FakeDevice*>(d);
  std::lock_guard lock(fd->mutex);
  for (auto* p : fd->allocations) std::free(p);
  fd->allocations.clear();
  for (auto* st : fd->streams) std::unique_ptr<FakeStream> owned(st);
  fd->streams.clear();
  // Communicators outlive a reset, aborted (xal_backend.h, device_reset):
  // their owner still destroys them.
  abort_comms(*fd);
  ++g_resets;
  return XAL_SUCCESS;
}
xal_status_t f_alloc(xal_bdevice_t* d, size_t bytes, xal_devptr_t* out) {
  auto* fd = reinterpret_cast<FakeDevice*>(d);
  auto* p = static_cast<uint8_t*>(std::calloc(1, bytes));
  if (p == nullptr) return XAL_ERROR_OUT_OF_MEMORY;
  std::lock_guard lock(fd->mutex);
  fd->allocations.insert(p);
  *out = reinterpret_cast<xal_devptr_t>(p);
  return XAL_SUCCESS;
}
xal_status_t f_free(xal_bdevice_t* d, xal_devptr_t ptr) {
  auto* fd = reinterpret_cast<FakeDevice*>(d);
  auto* p = reinterpret_cast<uint8_t*>(ptr);
  std::lock_guard lock(fd->mutex);
  if (fd->allocations.erase(p) == 0) return XAL_ERROR_INVALID_ARGUMENT;
  std::free(p);
  return XAL_SUCCESS;
}
xal_status_t f_info(xal_bdevice_t*, uint64_t* f, uint64_t* t) {
  *f = *t = 1 << 30;
  return XAL_SUCCESS;
}
xal_status_t f_stream_create(xal_bdevice_t* d, uint32_t, xal_bstream_t** out) {
  auto* fd = reinterpret_cast<FakeDevice*>(d);
  auto* st = std::make_unique<FakeStream>().release();
  st->device = fd;
  std::lock_guard lock(fd->mutex);
  fd->streams.insert(st);
  *out = reinterpret_cast<xal_bstream_t*>(st);
  return XAL_SUCCESS;
}
xal_status_t f_stream_destroy(xal_bstream_t* s) {
  auto* st = reinterpret_cast<FakeStream*>(s);
  if (destroy_fails(s)) return XAL_ERROR_BACKEND;
  st->run();
  std::lock_guard lock(st->device->mutex);
  st->device->streams.erase(st);
  std::unique_ptr<FakeStream> owned(st);
  ++g_stream_destroys;
  return XAL_SUCCESS;
}
xal_status_t f_ok_stream(xal_bstream_t*) { return XAL_SUCCESS; }
xal_status_t f_stream_sync(xal_bstream_t* s) {
  ++g_stream_syncs;
  reinterpret_cast<FakeStream*>(s)->run();
  return XAL_SUCCESS;
}
xal_status_t f_host_func(xal_bstream_t* s, void (*fn)(void*), void* user) {
  return on_stream(s, [fn, user] { fn(user); });
}
xal_status_t f_htod(xal_bstream_t* s, xal_devptr_t dst, const void* src,
                    size_t n) {
  return on_stream(s, [=] { std::memcpy(reinterpret_cast<void*>(dst), src, n); });
}
xal_status_t f_dtoh(xal_bstream_t* s, void* dst, xal_devptr_t src, size_t n) {
  return on_stream(s, [=] { std::memcpy(dst, reinterpret_cast<const void*>(src), n); });
}
xal_status_t f_dtod(xal_bstream_t* s, xal_devptr_t dst, xal_devptr_t src,
                    size_t n) {
  return on_stream(s, [=] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<void*>(src), n);
  });
}
xal_status_t f_peer(xal_bstream_t* s, xal_bdevice_t*, xal_devptr_t dst,
                    xal_bdevice_t*, xal_devptr_t src, size_t n) {
  return f_dtod(s, dst, src, n);
}
xal_status_t f_memset(xal_bstream_t* s, xal_devptr_t dst, uint8_t v, size_t n) {
  return on_stream(s, [=] { std::memset(reinterpret_cast<void*>(dst), v, n); });
}
xal_status_t f_event_create(xal_bdevice_t* d, uint32_t, xal_bevent_t** out) {
  *out = reinterpret_cast<xal_bevent_t*>(
      std::make_unique<FakeEvent>(FakeEvent{reinterpret_cast<FakeDevice*>(d)}).release());
  return XAL_SUCCESS;
}
xal_status_t f_event_destroy(xal_bevent_t* e) {
  if (destroy_fails(e)) return XAL_ERROR_BACKEND;
  std::unique_ptr<FakeEvent> owned(reinterpret_cast<FakeEvent*>(e));
  ++g_event_destroys;
  return XAL_SUCCESS;
}
xal_status_t f_event_record(xal_bevent_t*, xal_bstream_t*) { return XAL_SUCCESS; }
xal_status_t f_wait(xal_bstream_t*, xal_bevent_t*) { return XAL_SUCCESS; }
xal_status_t f_ok_event(xal_bevent_t*) { return XAL_SUCCESS; }
xal_status_t f_elapsed(xal_bevent_t*, xal_bevent_t*, float* ms) {
  *ms = 0.0f;
  return XAL_SUCCESS;
}
struct FakeComm {
  FakeDevice* device;
  std::atomic<bool> aborted{false};
};
xal_status_t f_comm_create(xal_bdevice_t* const* devs, uint32_t n,
                           const xal_bcomm_options_t*, xal_bcomm_t** out) {
  for (uint32_t i = 0; i < n; ++i) {
    auto c = std::make_unique<FakeComm>();
    c->device = reinterpret_cast<FakeDevice*>(devs[i]);
    std::lock_guard lock(c->device->mutex);
    c->device->comms.insert(c.get());
    out[i] = reinterpret_cast<xal_bcomm_t*>(c.release());
  }
  return XAL_SUCCESS;
}
xal_status_t f_comm_destroy(xal_bcomm_t* c) {
  std::unique_ptr<FakeComm> owned(reinterpret_cast<FakeComm*>(c));
  std::lock_guard lock(owned->device->mutex);
  owned->device->comms.erase(owned.get());
  ++g_comm_destroys;
  return XAL_SUCCESS;
}
xal_status_t f_comm_abort(xal_bcomm_t* c) {
  reinterpret_cast<FakeComm*>(c)->aborted = true;
  return XAL_SUCCESS;
}
xal_status_t f_group_start(xal_backend_t*) {
  ++t_group_depth;
  return XAL_SUCCESS;
}
// As NCCL: the collectives of a group are queued on their streams here.
xal_status_t f_group_end(xal_backend_t*) {
  if (t_group_depth > 0 && --t_group_depth == 0) {
    for (auto& [st, work] : t_grouped) {
      on_stream(reinterpret_cast<xal_bstream_t*>(st), std::move(work));
    }
    t_grouped.clear();
  }
  return XAL_SUCCESS;
}
void abort_comms(FakeDevice& d) {
  for (auto* c : d.comms) c->aborted = true;
}
void free_comms(FakeDevice& d) {  // with d.mutex held or at shutdown
  for (auto* c : d.comms) std::unique_ptr<FakeComm> owned(c);
  d.comms.clear();
}
// One-rank semantics: enough to see the call reach the target.
xal_status_t f_allreduce(xal_bcomm_t*, xal_devptr_t send, xal_devptr_t recv,
                         size_t count, xal_dtype_t, xal_op_t, xal_bstream_t* s) {
  auto work = [=] {
    std::memmove(reinterpret_cast<void*>(recv), reinterpret_cast<void*>(send),
                 count * 4);
  };
  if (g_queued && t_group_depth > 0) {
    t_grouped.emplace_back(reinterpret_cast<FakeStream*>(s), work);
    return XAL_SUCCESS;
  }
  return on_stream(s, work);
}

void* f_to_host(xal_bdevice_t*, xal_devptr_t p, size_t) {
  return reinterpret_cast<void*>(p);
}
xal_status_t f_host_alloc(xal_backend_t*, size_t bytes, uint32_t, void** out) {
  *out = std::calloc(1, bytes);
  if (*out == nullptr) return XAL_ERROR_OUT_OF_HOST_MEMORY;
  ++g_host_allocations;
  return XAL_SUCCESS;
}
xal_status_t f_host_free(xal_backend_t*, void* p) {
  std::free(p);
  --g_host_allocations;
  return XAL_SUCCESS;
}

xal_backend_table_t make(bool with_optional) {
  xal_backend_table_t t{};
  t.struct_size = sizeof t;
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = "fake";
  t.version = "1.0";
  t.init = f_init;
  t.shutdown = f_shutdown;
  t.device_count = f_device_count;
  t.device_get = f_device_get;
  t.device_get_properties = f_props;
  t.device_synchronize = f_device_sync;
  t.mem_alloc = f_alloc;
  t.mem_free = f_free;
  t.mem_get_info = f_info;
  t.stream_create = f_stream_create;
  t.stream_destroy = f_stream_destroy;
  t.stream_synchronize = f_stream_sync;
  t.stream_query = f_ok_stream;
  t.memcpy_htod = f_htod;
  t.memcpy_dtoh = f_dtoh;
  t.memcpy_dtod = f_dtod;
  t.memset = f_memset;
  t.event_create = f_event_create;
  t.event_destroy = f_event_destroy;
  t.event_record = f_event_record;
  t.stream_wait_event = f_wait;
  t.event_synchronize = f_ok_event;
  t.event_query = f_ok_event;
  t.event_elapsed_ms = f_elapsed;
  if (with_optional) {
    t.describe = f_describe;
    t.device_reset = f_reset;
    t.memcpy_peer = f_peer;
    t.stream_enqueue_host_func = f_host_func;
    t.device_ptr_to_host = f_to_host;
    t.comm_create = f_comm_create;
    t.comm_destroy = f_comm_destroy;
    t.comm_abort = f_comm_abort;
    t.group_start = f_group_start;
    t.group_end = f_group_end;
    t.allreduce = f_allreduce;
  }
  return t;
}

// The full table less device_ptr_to_host, with host memory: flips of
// device memory go through staging buffers.
xal_backend_table_t make_queued() {
  xal_backend_table_t t = make(true);
  t.device_ptr_to_host = nullptr;
  t.host_alloc = f_host_alloc;
  t.host_free = f_host_free;
  return t;
}

const xal_backend_table_t kFull = make(true);
const xal_backend_table_t kMinimal = make(false);
const xal_backend_table_t kQueued = make_queued();

thread_local LastError t_last;

xal_status_t s_set_error(xal_status_t status, int64_t code, const char* name,
                         const char* message) {
  t_last = LastError{status, code, name != nullptr ? name : "",
                     message != nullptr ? message : ""};
  {
    std::lock_guard lock(g_reports_mutex);
    ++g_reports[status];
  }
  return status;
}
void s_log(int, const char*, const char*) {}
xal_status_t s_load(const char* name, const xal_backend_table_t** out,
                    char* path, size_t cap) {
  if (std::strcmp(name, "fake") != 0) {
    return s_set_error(XAL_ERROR_BACKEND_UNAVAILABLE, 0, nullptr,
                       "no such plugin");
  }
  *out = g_kind == FakeKind::minimal  ? &kMinimal
         : g_kind == FakeKind::queued ? &kQueued
                                      : &kFull;
  g_queued = g_kind == FakeKind::queued;
  if (cap > 0) std::snprintf(path, cap, "%s", "/fake/libxal_backend_fake.so");
  return XAL_SUCCESS;
}
const char* s_config(const char* key) {
  auto& c = config();
  auto it = c.find(key);
  return it == c.end() ? nullptr : it->second.c_str();
}

const xal_backend_services_t kServices = {
    sizeof(xal_backend_services_t), XAL_ABI_VERSION, s_set_error, s_log,
    s_load, s_config};

}  // namespace

LastError& last_error() { return t_last; }
std::map<std::string, std::string>& config() {
  static std::map<std::string, std::string> c;
  return c;
}
const xal_backend_services_t* services() { return &kServices; }
const xal_backend_table_t* fake_table(bool with_optional) {
  return with_optional ? &kFull : &kMinimal;
}
void use_minimal_fake(bool minimal) {
  use_fake(minimal ? FakeKind::minimal : FakeKind::full);
}
void use_fake(FakeKind kind) { g_kind = kind; }
int fake_resets() { return g_resets.load(); }
int fake_stream_destroys() { return g_stream_destroys.load(); }
int fake_event_destroys() { return g_event_destroys.load(); }
int fake_comm_destroys() { return g_comm_destroys.load(); }
void fail_next_destroys(int n) { g_failing_destroys = n; }
const void* fake_last_destroyed() { return g_last_destroyed.load(); }
int fake_stream_syncs() { return g_stream_syncs.load(); }
int fake_host_allocations() { return g_host_allocations.load(); }
int errors_reported(xal_status_t status) {
  std::lock_guard lock(g_reports_mutex);
  return g_reports[status];
}

}  // namespace xal::fault::testing
