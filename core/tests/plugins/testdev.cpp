// testdev: devices, memory, streams, copies and events.
#include "testdev.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace testdev {

namespace {

using Clock = std::chrono::steady_clock;

[[maybe_unused]] uint64_t config_uint(const xal_backend_services_t* s, const char* key,
                     uint64_t fallback) {
  const char* v = s->get_config(key);
  if (!v || !*v) return fallback;
  return std::strtoull(v, nullptr, 10);
}

// The plugin's name from its file: libxal_backend_<name>.so.
std::string own_name() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_name), &info) && info.dli_fname) {
    std::string f = info.dli_fname;
    f = f.substr(f.find_last_of('/') + 1);
    if (f.rfind("libxal_backend_", 0) == 0 && f.size() > 18)
      return f.substr(15, f.size() - 18);
  }
  return "testdev";
}

const std::string& plugin_name() {
  static const std::string name = own_name();
  return name;
}

xal_status_t td_init(const xal_backend_init_args_t* args, xal_backend_t** out) {
#ifdef TESTDEV_UNAVAILABLE
  (void)out;
  return args->services->set_error(XAL_ERROR_BACKEND_UNAVAILABLE, 100,
                                   "TESTDEV_ERROR_NO_DEVICE",
                                   "no testdev device present");
#else
  try {
    auto b = std::make_unique<Backend>();
    b->services = args->services;
#ifdef TESTDEV_PROBE
    if (args->argument) {
      const xal_backend_table_t* inner = nullptr;
      char path[512] = {};
      const xal_status_t s =
          args->services->load_backend(args->argument, &inner, path, sizeof path);
      if (s != XAL_SUCCESS) return s;  // the core's detail stays set
      b->loaded_path = path;
      b->loaded_name = inner->name;
    }
#endif
    b->name = plugin_name();
    b->async = config_uint(b->services, "XAL_TESTDEV_ASYNC", 0) != 0;
    b->host_ptr = config_uint(b->services, "XAL_TESTDEV_NO_HOST_PTR", 0) == 0;
    if (const char* f = b->services->get_config("XAL_TESTDEV_FAIL_DTOH"); f && *f) {
      const std::string spec = f;
      const size_t colon = spec.find(':');
      if (colon != std::string::npos && spec.substr(0, colon) == b->name)
        b->fail_dtoh = std::strtoull(spec.c_str() + colon + 1, nullptr, 10);
    }
    b->htod_delay_ms = config_uint(b->services, "XAL_TESTDEV_HTOD_DELAY_MS", 0);
    // XAL_TESTDEV_FAIL_COPIES=<name>: every copy and memset of that instance
    // fails (OUT_OF_MEMORY), before anything is queued.
    if (const char* f = b->services->get_config("XAL_TESTDEV_FAIL_COPIES"); f)
      b->fail_copies = b->name == f;
    const uint64_t n = config_uint(b->services, "XAL_TESTDEV_DEVICES", 2);
    const uint64_t mem = config_uint(b->services, "XAL_TESTDEV_MEMORY", 1ull << 30);
    for (uint64_t i = 0; i < n; ++i) {
      auto d = std::make_unique<Device>();
      d->backend = b.get();
      d->index = static_cast<uint32_t>(i);
      d->capacity = mem;
      b->devices.push_back(std::move(d));
    }
    *out = as<xal_backend_t>(b.release());
    return XAL_SUCCESS;
  } catch (...) {
    return args->services->set_error(XAL_ERROR_OUT_OF_HOST_MEMORY, 0, nullptr,
                                     "testdev: out of host memory");
  }
#endif
}

xal_status_t td_shutdown(xal_backend_t* backend) {
  std::unique_ptr<Backend> b(as<Backend>(backend));
  return XAL_SUCCESS;
}

xal_status_t td_describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  auto* b = as<Backend>(backend);
  if (b->loaded_name.empty())
    std::snprintf(out->name, sizeof out->name, "%s", b->name.c_str());
  else
    std::snprintf(out->name, sizeof out->name, "%s(%s)", b->name.c_str(),
                  b->loaded_name.c_str());
  std::snprintf(out->note, sizeof out->note, "%s", b->loaded_path.c_str());
  std::snprintf(out->driver_version, sizeof out->driver_version, "testdev 1");
  out->flags = XAL_BACKEND_FLAG_SIMULATED;
  return XAL_SUCCESS;
}

xal_status_t td_device_count(xal_backend_t* backend, uint32_t* out) {
  *out = static_cast<uint32_t>(as<Backend>(backend)->devices.size());
  return XAL_SUCCESS;
}

xal_status_t td_device_get(xal_backend_t* backend, uint32_t i,
                           xal_bdevice_t** out) {
  auto* b = as<Backend>(backend);
  if (i >= b->devices.size())
    return error(b, XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, "no such device");
  *out = as<xal_bdevice_t>(b->devices[i].get());
  return XAL_SUCCESS;
}

xal_status_t td_props(xal_bdevice_t* device, xal_device_properties_t* out) {
  auto* d = as<Device>(device);
  std::snprintf(out->name, sizeof out->name, "%s device %u",
                d->backend->name.c_str(), d->index);
  std::snprintf(out->vendor, sizeof out->vendor, "xal tests");
  out->kind = XAL_DEVICE_KIND_OTHER;
  out->memory_bytes = d->capacity;
  out->compute_units = 1;
  out->uuid[0] = static_cast<uint8_t>(d->index + 1);
  out->max_allocation_bytes = d->capacity;
  out->capabilities = XAL_DEVICE_CAP_EVENT_TIMING;
  return XAL_SUCCESS;
}

xal_status_t td_device_sync(xal_bdevice_t*) { return XAL_SUCCESS; }

xal_status_t td_reset(xal_bdevice_t*) { return XAL_SUCCESS; }

xal_status_t td_metrics(xal_bdevice_t*, xal_device_metrics_t* out) {
  out->temperature_c = 42.0;
  out->valid |= XAL_METRIC_TEMPERATURE | XAL_METRIC_SIMULATED;
  return XAL_SUCCESS;
}

xal_status_t td_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out) {
  auto* d = as<Device>(device);
  // Sizes are rounded up to 4 KiB (the core's registry keeps exact sizes).
  const uint64_t rounded = (static_cast<uint64_t>(bytes) + 4095) / 4096 * 4096;
  std::lock_guard lock(d->mu);
  if (rounded > d->capacity - d->used)
    return error(d->backend, XAL_ERROR_OUT_OF_MEMORY, 2, "TESTDEV_ERROR_OOM",
                 "testdev: device memory exhausted");
  try {
    auto mem = std::make_unique<std::byte[]>(rounded + 256);
    uint64_t addr = reinterpret_cast<uint64_t>(mem.get());
    addr = (addr + 255) / 256 * 256;
    d->blocks.emplace(addr, std::make_pair(std::move(mem), rounded));
    d->used += rounded;
    *out = addr;
    return XAL_SUCCESS;
  } catch (...) {
    return error(d->backend, XAL_ERROR_OUT_OF_MEMORY, 2, "TESTDEV_ERROR_OOM",
                 "testdev: host allocation failed");
  }
}

xal_status_t td_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  auto* d = as<Device>(device);
  std::lock_guard lock(d->mu);
  auto it = d->blocks.find(ptr);
  if (it == d->blocks.end())
    return error(d->backend, XAL_ERROR_INVALID_ARGUMENT, 1,
                 "TESTDEV_ERROR_INVALID_VALUE", "testdev: unknown pointer");
  d->used -= it->second.second;
  d->blocks.erase(it);
  return XAL_SUCCESS;
}

xal_status_t td_mem_info(xal_bdevice_t* device, uint64_t* free_b, uint64_t* total) {
  auto* d = as<Device>(device);
  std::lock_guard lock(d->mu);
  *total = d->capacity;
  *free_b = d->capacity - d->used;
  return XAL_SUCCESS;
}

xal_status_t td_host_register(xal_backend_t* backend, void* p, size_t n) {
  auto* b = as<Backend>(backend);
  std::lock_guard lock(b->mu);
  b->registered[p] = n;
  return XAL_SUCCESS;
}

xal_status_t td_host_unregister(xal_backend_t* backend, void* p) {
  auto* b = as<Backend>(backend);
  std::lock_guard lock(b->mu);
  return b->registered.erase(p)
             ? XAL_SUCCESS
             : error(b, XAL_ERROR_INVALID_ARGUMENT, 0, nullptr, "not registered");
}

xal_status_t td_stream_create(xal_bdevice_t* device, uint32_t,
                              xal_bstream_t** out) {
  auto* d = as<Device>(device);
  auto s = std::make_unique<Stream>();
  s->device = d;
  s->async = d->backend->async;
  if (s->async) {
    Stream* raw = s.get();
    s->worker = std::thread([raw] {
      std::unique_lock lock(raw->mu);
      for (;;) {
        raw->cv.wait(lock, [&] { return raw->stop || !raw->queue.empty(); });
        if (raw->queue.empty()) return;
        auto fn = std::move(raw->queue.front());
        raw->queue.pop_front();
        raw->busy = true;
        lock.unlock();
        fn();
        lock.lock();
        raw->busy = false;
        raw->cv.notify_all();
      }
    });
  }
  *out = as<xal_bstream_t>(s.release());
  return XAL_SUCCESS;
}

xal_status_t td_stream_destroy(xal_bstream_t* stream) {
  std::unique_ptr<Stream> s(as<Stream>(stream));
  return XAL_SUCCESS;
}

xal_status_t td_stream_sync(xal_bstream_t* stream) {
  as<Stream>(stream)->synchronize();
  return XAL_SUCCESS;
}

xal_status_t td_stream_query(xal_bstream_t* stream) {
  return as<Stream>(stream)->idle() ? XAL_SUCCESS : XAL_NOT_READY;
}

xal_status_t td_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user) {
  as<Stream>(stream)->enqueue([fn, user] { fn(user); });
  return XAL_SUCCESS;
}

// The failure XAL_TESTDEV_FAIL_COPIES asks for, or SUCCESS.
xal_status_t copy_failure(xal_bstream_t* s) {
  Backend* b = as<Stream>(s)->device->backend;
  if (!b->fail_copies) return XAL_SUCCESS;
  return error(b, XAL_ERROR_OUT_OF_MEMORY, 2, "TESTDEV_ERROR_COPY",
               "testdev: injected copy failure (XAL_TESTDEV_FAIL_COPIES)");
}

xal_status_t td_htod(xal_bstream_t* s, xal_devptr_t dst, const void* src, size_t n) {
  if (xal_status_t f = copy_failure(s); f) return f;
  Stream* stream = as<Stream>(s);
  const uint64_t delay = stream->async ? stream->device->backend->htod_delay_ms : 0;
  stream->enqueue([=] {
    if (delay) std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    std::memcpy(reinterpret_cast<void*>(dst), src, n);
  });
  return XAL_SUCCESS;
}

xal_status_t td_dtoh(xal_bstream_t* s, void* dst, xal_devptr_t src, size_t n) {
  if (xal_status_t f = copy_failure(s); f) return f;
  Backend* b = as<Stream>(s)->device->backend;
  if (b->fail_dtoh && ++b->dtohs == b->fail_dtoh)
    return error(b, XAL_ERROR_BACKEND, 999, "TESTDEV_ERROR_INJECTED",
                 "testdev: injected memcpy_dtoh failure (XAL_TESTDEV_FAIL_DTOH)");
  as<Stream>(s)->enqueue([=] { std::memcpy(dst, reinterpret_cast<const void*>(src), n); });
  return XAL_SUCCESS;
}

xal_status_t td_dtod(xal_bstream_t* s, xal_devptr_t dst, xal_devptr_t src, size_t n) {
  if (xal_status_t f = copy_failure(s); f) return f;
  as<Stream>(s)->enqueue([=] {
    std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  });
  return XAL_SUCCESS;
}

xal_status_t td_peer(xal_bstream_t* s, xal_bdevice_t*, xal_devptr_t dst,
                     xal_bdevice_t*, xal_devptr_t src, size_t n) {
  return td_dtod(s, dst, src, n);
}

xal_status_t td_memset(xal_bstream_t* s, xal_devptr_t dst, uint8_t v, size_t n) {
  if (xal_status_t f = copy_failure(s); f) return f;
  as<Stream>(s)->enqueue([=] { std::memset(reinterpret_cast<void*>(dst), v, n); });
  return XAL_SUCCESS;
}

xal_status_t td_event_create(xal_bdevice_t* device, uint32_t, xal_bevent_t** out) {
  auto e = std::make_unique<Event>();
  e->device = as<Device>(device);
  *out = as<xal_bevent_t>(e.release());
  return XAL_SUCCESS;
}

xal_status_t td_event_destroy(xal_bevent_t* event) {
  std::unique_ptr<Event> e(as<Event>(event));
  e->wait();
  return XAL_SUCCESS;
}

xal_status_t td_event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  auto* e = as<Event>(event);
  {
    std::lock_guard lock(e->mu);
    e->done = false;
    e->recorded = true;
  }
  as<Stream>(stream)->enqueue([e] {
    std::lock_guard lock(e->mu);
    e->time_ms = std::chrono::duration<double, std::milli>(
                     Clock::now().time_since_epoch()).count();
    e->done = true;
    e->cv.notify_all();
  });
  return XAL_SUCCESS;
}

xal_status_t td_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  auto* e = as<Event>(event);
  as<Stream>(stream)->enqueue([e] { e->wait(); });
  return XAL_SUCCESS;
}

xal_status_t td_event_sync(xal_bevent_t* event) {
  as<Event>(event)->wait();
  return XAL_SUCCESS;
}

xal_status_t td_event_query(xal_bevent_t* event) {
  auto* e = as<Event>(event);
  std::lock_guard lock(e->mu);
  return e->done ? XAL_SUCCESS : XAL_NOT_READY;
}

xal_status_t td_elapsed(xal_bevent_t* a, xal_bevent_t* b, float* out) {
  auto* x = as<Event>(a);
  auto* y = as<Event>(b);
  std::unique_lock lx(x->mu, std::defer_lock), ly(y->mu, std::defer_lock);
  if (x == y) lx.lock(); else std::lock(lx, ly);
  if (!x->recorded || !y->recorded)
    return error(x->device->backend, XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                 "testdev: event was never recorded");
  if (!x->done || !y->done) return XAL_NOT_READY;
  *out = static_cast<float>(y->time_ms - x->time_ms);
  return XAL_SUCCESS;
}

void* td_ptr_to_host(xal_bdevice_t* device, xal_devptr_t p, size_t) {
  auto* d = as<Device>(device);
  return d->backend->host_ptr ? reinterpret_cast<void*>(p) : nullptr;
}

xal_backend_table_t make_table() {
  xal_backend_table_t t{};
  t.struct_size = sizeof t;
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = plugin_name().c_str();
  t.version = "1.0.0";
  t.init = td_init;
  t.shutdown = td_shutdown;
  t.describe = td_describe;
  t.support_note = "verified on testdev's own tests only";
  t.device_count = td_device_count;
  t.device_get = td_device_get;
  t.device_get_properties = td_props;
  t.device_synchronize = td_device_sync;
  t.device_reset = td_reset;
  t.device_get_metrics = td_metrics;
  t.mem_alloc = td_alloc;
  t.mem_free = td_free;
  t.mem_get_info = td_mem_info;
  t.host_register = td_host_register;
  t.host_unregister = td_host_unregister;
  t.stream_create = td_stream_create;
  t.stream_destroy = td_stream_destroy;
  t.stream_synchronize = td_stream_sync;
  t.stream_query = td_stream_query;
  t.stream_enqueue_host_func = td_host_func;
  t.memcpy_htod = td_htod;
  t.memcpy_dtoh = td_dtoh;
  t.memcpy_dtod = td_dtod;
  t.memcpy_peer = td_peer;
  t.memset = td_memset;
  t.event_create = td_event_create;
  t.event_destroy = td_event_destroy;
  t.event_record = td_event_record;
  t.stream_wait_event = td_wait_event;
  t.event_synchronize = td_event_sync;
  t.event_query = td_event_query;
  t.event_elapsed_ms = td_elapsed;
  t.device_ptr_to_host = td_ptr_to_host;
  fill_extras(t);
#ifdef TESTDEV_PROBE
  t.get_extension = probe_extension;
#endif
  return t;
}

// The table as exported, with room for entries of a newer minor.
struct ExportedTable {
  xal_backend_table_t table;
  void* future_entries[8];
};

ExportedTable make_exported() {
  ExportedTable e{};
  e.table = make_table();
#if defined(TESTDEV_ABI_1_0)
  // What a plugin built against the 1.0 headers exports: minor 0 and the
  // table through get_extension (no support note, no interop entries).
  e.table.abi_minor = 0;
  e.table.struct_size = XAL_BACKEND_TABLE_SIZE_1_0;
  e.table.mem_import = reinterpret_cast<decltype(e.table.mem_import)>(0x1);  // past its end
#elif defined(TESTDEV_TRUNCATED)
  // An older plugin: only the required entries.
  e.table.struct_size = XAL_BACKEND_TABLE_MIN_SIZE;
#elif defined(TESTDEV_NEWER_MINOR)
  e.table.abi_minor = XAL_ABI_VERSION_MINOR + 3;
  e.table.struct_size = sizeof(ExportedTable);
#elif defined(TESTDEV_MAJOR2)
  e.table.abi_major = XAL_ABI_VERSION_MAJOR + 1;
  e.table.abi_minor = 0;  // "ABI 2.0"
#elif defined(TESTDEV_TINY)
  // A table that stops before the required event entries.
  e.table.struct_size = XAL_BACKEND_TABLE_MIN_SIZE - 2 * sizeof(void*);
#elif defined(TESTDEV_MINIMAL)
  // Every optional entry left NULL: the core's fallbacks run.
  xal_backend_table_t& t = e.table;
  t.describe = nullptr;
  t.device_reset = nullptr;
  t.device_get_health = nullptr;
  t.device_get_metrics = nullptr;
  t.host_alloc = nullptr;
  t.host_free = nullptr;
  t.host_register = nullptr;
  t.host_unregister = nullptr;
  t.stream_enqueue_host_func = nullptr;
  t.memcpy_peer = nullptr;
  t.module_load = nullptr;
  t.module_unload = nullptr;
  t.kernel_get = nullptr;
  t.kernel_launch = nullptr;
  t.comm_create = nullptr;
  t.comm_destroy = nullptr;
  t.group_start = nullptr;
  t.group_end = nullptr;
  t.allreduce = nullptr;
  t.broadcast = nullptr;
  t.allgather = nullptr;
  t.device_ptr_to_host = nullptr;
  t.get_extension = nullptr;
#endif
  return e;
}

}  // namespace

void Stream::enqueue(std::function<void()> fn) {
  if (!async) {
    fn();
    return;
  }
  std::lock_guard lock(mu);
  queue.push_back(std::move(fn));
  cv.notify_all();
}

void Stream::synchronize() {
  if (!async) return;
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return queue.empty() && !busy; });
}

bool Stream::idle() {
  std::lock_guard lock(mu);
  return queue.empty() && !busy;
}

Stream::~Stream() {
  if (!worker.joinable()) return;
  synchronize();
  {
    std::lock_guard lock(mu);
    stop = true;
    cv.notify_all();
  }
  worker.join();
}

void Event::wait() {
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done; });
}

xal_status_t error(Backend* b, xal_status_t status, int64_t code,
                   const char* name, const std::string& message) {
  return b->services->set_error(status, code, name, message.c_str());
}

}  // namespace testdev

extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
#ifndef TESTDEV_MAJOR2
  if (XAL_ABI_MAJOR(core_abi_version) != XAL_ABI_VERSION_MAJOR) return nullptr;
#else
  (void)core_abi_version;
#endif
  static const testdev::ExportedTable table = testdev::make_exported();
  return &table.table;
}
