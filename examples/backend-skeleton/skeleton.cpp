// skeleton: a minimal but real xal backend, outside the xal tree.
//
// It drives a made-up "host device": two devices whose memory is host
// memory, streams that run their work in order on a thread each, events
// with timestamps, and one kernel ("fill": sets `count` 32-bit words to a
// value). It uses nothing of xal but the plugin ABI header, xal_backend.h,
// and shows what docs/WRITING_A_BACKEND.md asks of a backend:
//   - one exported symbol, xal_backend_get, with the version handshake;
//   - entries named after the entry list, the table made from it
//     (XAL_BACKEND_ENTRIES) and the required ones checked at compile time;
//   - statuses with a message through services->set_error, no exception
//     across the ABI;
//   - in-order streams, host functions, events and waits;
//   - honest capability bits and a support note.
#include <xal/xal_backend.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <set>
#include <thread>
#include <type_traits>
#include <vector>

namespace skeleton {

using Clock = std::chrono::steady_clock;

struct Backend;

struct Device {
  Backend* backend = nullptr;
  uint32_t index = 0;
  std::mutex mu;
  std::map<uint64_t, size_t> blocks;  // address -> size (aligned_alloc)
  std::mutex streams_mu;              // guards streams (not held by work)
  std::set<struct Stream*> streams;   // live streams, for device_synchronize
  uint64_t used = 0;
  ~Device() {
    for (const auto& [p, size] : blocks) std::free(reinterpret_cast<void*>(p));
  }
  static constexpr uint64_t kMemory = 1ull << 30;  // 1 GiB per device
};

struct Backend {
  const xal_backend_services_t* services = nullptr;
  Device devices[2];
};

// One stream: a thread that runs queued work in order.
struct Stream {
  explicit Stream(Device* d) : device(d), worker([this] { run(); }) {}
  ~Stream() {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    cv.notify_all();
    worker.join();
  }
  void enqueue(std::function<void()> work) {
    {
      std::lock_guard lock(mu);
      queue.push_back(std::move(work));
    }
    cv.notify_all();
  }
  void drain() {
    std::unique_lock lock(mu);
    idle_cv.wait(lock, [this] { return queue.empty() && !busy; });
  }
  bool idle() {
    std::lock_guard lock(mu);
    return queue.empty() && !busy;
  }

  Device* device;
  std::mutex mu;
  std::condition_variable cv, idle_cv;
  std::deque<std::function<void()>> queue;
  bool busy = false, stop = false;
  std::thread worker;

 private:
  void run() {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [this] { return stop || !queue.empty(); });
      if (queue.empty()) return;  // stopped and drained
      auto work = std::move(queue.front());
      queue.pop_front();
      busy = true;
      lock.unlock();
      work();
      lock.lock();
      busy = false;
      if (queue.empty()) idle_cv.notify_all();
    }
  }
};

// What an event captured: done once its stream reached the record.
struct Record {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  Clock::time_point at;
  void complete() {
    {
      std::lock_guard lock(mu);
      done = true;
      at = Clock::now();
    }
    cv.notify_all();
  }
  void wait() {
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return done; });
  }
};

struct Event {
  Device* device;
  uint32_t flags;
  std::mutex mu;
  std::shared_ptr<Record> last;  // NULL until recorded
};

struct Module {};
struct Kernel {};
Module the_module;
Kernel fill_kernel;

template <class T, class H>
T* as(H* h) { return reinterpret_cast<T*>(h); }
template <class H, class T>
H* handle(T* p) { return reinterpret_cast<H*>(p); }

// Reports an error with a message (the core shows it in xal_last_error).
xal_status_t report(const Backend* b, xal_status_t status, const std::string& message) {
  if (b && b->services && b->services->set_error)
    b->services->set_error(status, 0, nullptr, ("skeleton: " + message).c_str());
  return status;
}

// Runs an entry's body; no exception crosses the ABI.
template <class F>
xal_status_t guarded(const Backend* b, F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return report(b, XAL_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return report(b, XAL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return report(b, XAL_ERROR_INTERNAL, "unknown exception");
  }
}

void* host(xal_devptr_t p) { return reinterpret_cast<void*>(static_cast<uintptr_t>(p)); }

// --- lifecycle and devices ----------------------------------------------

xal_status_t init(const xal_backend_init_args_t* args, xal_backend_t** out) {
  auto b = new (std::nothrow) Backend;
  if (!b) return XAL_ERROR_OUT_OF_HOST_MEMORY;
  b->services = args ? args->services : nullptr;
  for (uint32_t i = 0; i < 2; ++i) {
    b->devices[i].backend = b;
    b->devices[i].index = i;
  }
  *out = handle<xal_backend_t>(b);
  return XAL_SUCCESS;
}

xal_status_t shutdown(xal_backend_t* backend) {
  delete as<Backend>(backend);  // the core destroyed every stream and event first
  return XAL_SUCCESS;
}

xal_status_t describe(xal_backend_t*, xal_backend_describe_t* out) {
  std::snprintf(out->name, sizeof out->name, "skeleton");
  std::snprintf(out->driver_version, sizeof out->driver_version, "skeleton 1.0");
  out->flags = XAL_BACKEND_FLAG_SIMULATED;
  std::snprintf(out->note, sizeof out->note, "a made-up host device (examples/backend-skeleton)");
  return XAL_SUCCESS;
}

xal_status_t device_count(xal_backend_t*, uint32_t* out) {
  *out = 2;
  return XAL_SUCCESS;
}

xal_status_t device_get(xal_backend_t* backend, uint32_t i, xal_bdevice_t** out) {
  Backend* b = as<Backend>(backend);
  if (i >= 2) return report(b, XAL_ERROR_INVALID_ARGUMENT, "no device " + std::to_string(i));
  *out = handle<xal_bdevice_t>(&b->devices[i]);
  return XAL_SUCCESS;
}

xal_status_t device_get_properties(xal_bdevice_t* device, xal_device_properties_t* out) {
  Device* d = as<Device>(device);
  std::snprintf(out->name, sizeof out->name, "Skeleton host device %u", d->index);
  std::snprintf(out->vendor, sizeof out->vendor, "xal examples");
  out->kind = XAL_DEVICE_KIND_CPU;
  out->uuid[0] = 0x5c;
  out->uuid[15] = static_cast<uint8_t>(d->index + 1);
  out->memory_bytes = Device::kMemory;
  out->compute_units = 1;
  out->peak_memory_bandwidth_gbps = 0;  // unknown: host memory, whatever the host has
  out->capabilities = XAL_DEVICE_CAP_SIMULATED | XAL_DEVICE_CAP_EVENT_TIMING;
  out->max_allocation_bytes = Device::kMemory;
  return XAL_SUCCESS;
}

// --- memory -----------------------------------------------------------------

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out) {
  Device* d = as<Device>(device);
  return guarded(d->backend, [&] {
    std::lock_guard lock(d->mu);
    if (bytes > Device::kMemory - d->used)
      return report(d->backend, XAL_ERROR_OUT_OF_MEMORY,
                    "out of memory: " + std::to_string(bytes) + " bytes asked, " +
                        std::to_string(Device::kMemory - d->used) + " free");
    // 256-byte alignment, as xal.h promises.
    void* block = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
    if (!block) return report(d->backend, XAL_ERROR_OUT_OF_MEMORY, "host allocation failed");
    const auto p = reinterpret_cast<uint64_t>(block);
    d->blocks.emplace(p, bytes);
    d->used += bytes;
    *out = p;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  Device* d = as<Device>(device);
  std::lock_guard lock(d->mu);
  auto it = d->blocks.find(ptr);
  if (it == d->blocks.end())
    return report(d->backend, XAL_ERROR_INVALID_ARGUMENT, "not an allocation");
  std::free(host(ptr));
  d->used -= it->second;
  d->blocks.erase(it);
  return XAL_SUCCESS;
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free, uint64_t* out_total) {
  Device* d = as<Device>(device);
  std::lock_guard lock(d->mu);
  *out_free = Device::kMemory - d->used;
  *out_total = Device::kMemory;
  return XAL_SUCCESS;
}

// The core may read and write this device's memory directly.
void* device_ptr_to_host(xal_bdevice_t*, xal_devptr_t ptr, size_t) { return host(ptr); }

// --- streams and copies -----------------------------------------------------

xal_status_t stream_create(xal_bdevice_t* device, uint32_t, xal_bstream_t** out) {
  Device* d = as<Device>(device);
  return guarded(d->backend, [&] {
    auto s = std::make_unique<Stream>(d);
    std::lock_guard lock(d->streams_mu);
    d->streams.insert(s.get());
    *out = handle<xal_bstream_t>(s.release());
    return XAL_SUCCESS;
  });
}

xal_status_t stream_destroy(xal_bstream_t* stream) {
  Stream* s = as<Stream>(stream);
  {
    std::lock_guard lock(s->device->streams_mu);
    s->device->streams.erase(s);
  }
  s->drain();
  delete s;
  return XAL_SUCCESS;
}

// Waits for every stream of the device.
xal_status_t device_synchronize(xal_bdevice_t* device) {
  Device* d = as<Device>(device);
  std::lock_guard lock(d->streams_mu);
  for (Stream* s : d->streams) s->drain();
  return XAL_SUCCESS;
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  as<Stream>(stream)->drain();
  return XAL_SUCCESS;
}

xal_status_t stream_query(xal_bstream_t* stream) {
  return as<Stream>(stream)->idle() ? XAL_SUCCESS : XAL_NOT_READY;
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user) {
  Stream* s = as<Stream>(stream);
  return guarded(s->device->backend, [&] {
    s->enqueue([fn, user] { fn(user); });
    return XAL_SUCCESS;
  });
}

// Every copy is a memcpy on the stream's thread: device memory is host memory.
xal_status_t copy(xal_bstream_t* stream, void* dst, const void* src, size_t bytes) {
  Stream* s = as<Stream>(stream);
  return guarded(s->device->backend, [&] {
    s->enqueue([=] { std::memmove(dst, src, bytes); });
    return XAL_SUCCESS;
  });
}

xal_status_t memcpy_htod(xal_bstream_t* s, xal_devptr_t dst, const void* src, size_t bytes) {
  return copy(s, host(dst), src, bytes);
}
xal_status_t memcpy_dtoh(xal_bstream_t* s, void* dst, xal_devptr_t src, size_t bytes) {
  return copy(s, dst, host(src), bytes);
}
xal_status_t memcpy_dtod(xal_bstream_t* s, xal_devptr_t dst, xal_devptr_t src, size_t bytes) {
  return copy(s, host(dst), host(src), bytes);
}
xal_status_t memcpy_peer(xal_bstream_t* s, xal_bdevice_t*, xal_devptr_t dst, xal_bdevice_t*,
                         xal_devptr_t src, size_t bytes) {
  return copy(s, host(dst), host(src), bytes);
}

xal_status_t memset(xal_bstream_t* stream, xal_devptr_t dst, uint8_t value, size_t bytes) {
  Stream* s = as<Stream>(stream);
  return guarded(s->device->backend, [&] {
    s->enqueue([=] { std::memset(host(dst), value, bytes); });
    return XAL_SUCCESS;
  });
}

// --- events -------------------------------------------------------------------

xal_status_t event_create(xal_bdevice_t* device, uint32_t flags, xal_bevent_t** out) {
  Device* d = as<Device>(device);
  return guarded(d->backend, [&] {
    *out = handle<xal_bevent_t>(new Event{d, flags, {}, nullptr});
    return XAL_SUCCESS;
  });
}

xal_status_t event_destroy(xal_bevent_t* event) {
  delete as<Event>(event);  // a record still queued holds its own Record
  return XAL_SUCCESS;
}

std::shared_ptr<Record> last_record(Event* e) {
  std::lock_guard lock(e->mu);
  return e->last;
}

xal_status_t event_record(xal_bevent_t* event, xal_bstream_t* stream) {
  Event* e = as<Event>(event);
  Stream* s = as<Stream>(stream);
  return guarded(s->device->backend, [&] {
    auto r = std::make_shared<Record>();
    {
      std::lock_guard lock(e->mu);
      e->last = r;
    }
    s->enqueue([r] { r->complete(); });
    return XAL_SUCCESS;
  });
}

xal_status_t stream_wait_event(xal_bstream_t* stream, xal_bevent_t* event) {
  Stream* s = as<Stream>(stream);
  auto r = last_record(as<Event>(event));
  if (!r) return XAL_SUCCESS;  // never recorded: nothing to wait for
  return guarded(s->device->backend, [&] {
    s->enqueue([r] { r->wait(); });
    return XAL_SUCCESS;
  });
}

xal_status_t event_synchronize(xal_bevent_t* event) {
  if (auto r = last_record(as<Event>(event))) r->wait();
  return XAL_SUCCESS;
}

xal_status_t event_query(xal_bevent_t* event) {
  auto r = last_record(as<Event>(event));
  if (!r) return XAL_SUCCESS;
  std::lock_guard lock(r->mu);
  return r->done ? XAL_SUCCESS : XAL_NOT_READY;
}

xal_status_t event_elapsed_ms(xal_bevent_t* start, xal_bevent_t* end, float* out_ms) {
  Event* a = as<Event>(start);
  Event* z = as<Event>(end);
  const Backend* b = a->device->backend;
  if ((a->flags | z->flags) & XAL_EVENT_DISABLE_TIMING)
    return report(b, XAL_ERROR_INVALID_ARGUMENT, "an event was created without timing");
  auto ra = last_record(a), rz = last_record(z);
  if (!ra || !rz) return report(b, XAL_ERROR_INVALID_ARGUMENT, "an event was never recorded");
  std::scoped_lock lock(ra->mu, rz->mu);
  if (!ra->done || !rz->done) return XAL_NOT_READY;
  *out_ms = std::chrono::duration<float, std::milli>(rz->at - ra->at).count();
  return XAL_SUCCESS;
}

// --- the kernel -----------------------------------------------------------------

// Format NATIVE, image "skeleton": one kernel, "fill"(devptr dst, u32 value,
// u64 count).
xal_status_t module_load(xal_bdevice_t* device, uint32_t format, const void* image,
                         size_t bytes, xal_bmodule_t** out) {
  Device* d = as<Device>(device);
  if (format != XAL_MODULE_FORMAT_NATIVE || bytes < 8 || std::memcmp(image, "skeleton", 8) != 0)
    return report(d->backend, XAL_ERROR_INVALID_ARGUMENT,
                  "only the NATIVE image \"skeleton\" is known");
  *out = handle<xal_bmodule_t>(&the_module);
  return XAL_SUCCESS;
}

xal_status_t module_unload(xal_bmodule_t*) { return XAL_SUCCESS; }

xal_status_t kernel_get(xal_bmodule_t*, const char* name, xal_bkernel_t** out) {
  if (std::strcmp(name, "fill") != 0) return XAL_ERROR_INVALID_ARGUMENT;
  *out = handle<xal_bkernel_t>(&fill_kernel);
  return XAL_SUCCESS;
}

xal_status_t kernel_launch(xal_bstream_t* stream, xal_bkernel_t*, const xal_launch_config_t*,
                           void** args, size_t arg_count) {
  Stream* s = as<Stream>(stream);
  if (arg_count != 3 || !args)
    return report(s->device->backend, XAL_ERROR_INVALID_ARGUMENT,
                  "fill takes 3 arguments (dst, value, count)");
  const auto dst = *static_cast<const xal_devptr_t*>(args[0]);
  const auto value = *static_cast<const uint32_t*>(args[1]);
  const auto count = *static_cast<const uint64_t*>(args[2]);
  return guarded(s->device->backend, [&] {
    s->enqueue([=] {
      auto* p = static_cast<uint32_t*>(host(dst));
      for (uint64_t i = 0; i < count; ++i) p[i] = value;
    });
    return XAL_SUCCESS;
  });
}

constexpr const char* support_note = "an example backend: a made-up host device";

// --- the table, made from the entry list ------------------------------------------

// Every entry above is named after its table entry: each X(name, ...) of
// XAL_BACKEND_ENTRIES either finds skeleton::name or, through this
// using-directive, the Absent marker below, and is then left NULL.
namespace absent {
struct Absent {};
#define SKELETON_ABSENT(name, presence, minor) inline constexpr Absent name{};
XAL_BACKEND_ENTRIES(SKELETON_ABSENT)
#undef SKELETON_ABSENT
}  // namespace absent
using namespace absent;

template <class T>
constexpr void set(T& slot, std::type_identity_t<T> value) { slot = value; }
template <class T>
constexpr void set(T&, absent::Absent) {}

constexpr xal_backend_table_t make_table() {
  xal_backend_table_t t{};
  t.struct_size = sizeof t;
  t.abi_major = XAL_ABI_VERSION_MAJOR;
  t.abi_minor = XAL_ABI_VERSION_MINOR;
  t.name = "skeleton";
  t.version = "1.0.0";
#define SKELETON_SET(name, presence, minor)                                          \
  set(t.name, skeleton::name);                                                      \
  static_assert(presence != XAL_ENTRY_REQUIRED ||                                   \
                    !std::is_same_v<std::remove_cvref_t<decltype(skeleton::name)>, \
                                    absent::Absent>,                                \
                "required entry missing: " #name);
  XAL_BACKEND_ENTRIES(SKELETON_SET)
#undef SKELETON_SET
  return t;
}

constexpr xal_backend_table_t kTable = make_table();

}  // namespace skeleton

extern "C" XAL_BACKEND_EXPORT const xal_backend_table_t* xal_backend_get(
    uint32_t core_abi_version) {
  if (!xal_backend_abi_compatible(core_abi_version)) return nullptr;
  return &skeleton::kTable;
}
