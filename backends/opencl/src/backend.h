// The backend's objects. The core sees them only as the opaque xal_b*_t of
// xal_backend.h; each is owned by its backend instance, which frees what is
// left at shutdown.
#pragma once

#include "command_log.h"
#include "deferred_release.h"
#include "device.h"
#include "dynamic_symbols.h"
#include "host_worker.h"
#include "address_map.h"
#include "status_map.h"
#include "xal/xal_backend.h"
#include "xalsupport/guarded.h"

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace xal::opencl {

// Owner of live objects of one kind. Thread-safe.
template <typename T>
class Registry {
 public:
  T* add(std::unique_ptr<T> item) {
    T* raw = item.get();
    std::lock_guard lock(mutex_);
    items_.emplace(raw, std::move(item));
    return raw;
  }
  std::unique_ptr<T> remove(T* item) {
    std::lock_guard lock(mutex_);
    auto it = items_.find(item);
    if (it == items_.end()) return nullptr;
    std::unique_ptr<T> out = std::move(it->second);
    items_.erase(it);
    return out;
  }
  std::vector<std::unique_ptr<T>> take_all() {
    std::lock_guard lock(mutex_);
    std::vector<std::unique_ptr<T>> out;
    for (auto& [raw, item] : items_) out.push_back(std::move(item));
    items_.clear();
    return out;
  }
  template <typename F>
  void for_each(F&& f) {
    std::lock_guard lock(mutex_);
    for (auto& [raw, item] : items_) f(*item);
  }
  // Calls f(item) under the lock when `key` is a live item (never
  // dereferenced otherwise); false when it is not.
  template <typename F>
  bool visit(const void* key, F&& f) {
    std::lock_guard lock(mutex_);
    auto it = items_.find(static_cast<T*>(const_cast<void*>(key)));
    if (it == items_.end()) return false;
    f(*it->second);
    return true;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<T*, std::unique_ptr<T>> items_;
};

struct Platform {
  cl_platform_id id = nullptr;
  cl_context context = nullptr;
  std::string name;
  std::string vendor;
  std::string version;
  size_t device_count = 0;
};

// What OpenCL callbacks and host-function threads touch, shared
// (shared_ptr) with them so that one that runs after stream_destroy or
// shutdown finds it alive: a copy of the entry points (the library
// is never unloaded, see README) and the held-back buffer releases.
struct CallbackShared {
  explicit CallbackShared(const ClApi& loaded) : api(loaded) {}
  const ClApi api;
  DeferredReleases releases;
};

struct HostAllocation {
  cl_mem mem = nullptr;       // CL_MEM_ALLOC_HOST_PTR buffer, mapped
  cl_command_queue queue = nullptr;
  void* plain = nullptr;      // aligned host memory when no buffer is used
  size_t bytes = 0;
};

}  // namespace xal::opencl

struct xal_bdevice_s {
  xal_backend_s* backend = nullptr;
  uint32_t index = 0;          // within the backend instance
  size_t platform = 0;         // index into backend->platforms
  cl_device_id id = nullptr;
  cl_context context = nullptr;
  cl_command_queue internal_queue = nullptr;  // host-side helpers
  xal::opencl::DeviceInfo info;
  std::unique_ptr<xal::opencl::AddressSpace> memory;
  // xal's own kernels (src/kernels), built at first use.
  std::mutex builtin_mutex;  // guards the two below and their launches
  cl_program builtin_program = nullptr;
  std::unordered_map<std::string, cl_kernel> builtin_kernels;
};

struct xal_bstream_s {
  xal_bdevice_s* device = nullptr;
  cl_command_queue queue = nullptr;
  std::mutex worker_mutex;  // guards `worker`
  // Runs the host functions; started at first use, shared with the marker
  // callbacks that post to it.
  std::shared_ptr<xal::opencl::HostWorker> worker;
  // The commands not yet known complete and an unreported failure; every
  // enqueue goes through it (see submit()).
  std::shared_ptr<xal::opencl::CommandLog> log;
};

struct xal_bevent_s {
  xal_bdevice_s* device = nullptr;
  uint32_t flags = 0;
  std::mutex mutex;
  cl_event event = nullptr;  // the last recorded marker, NULL before
  cl_context context = nullptr;  // of the stream it was recorded on
};

struct xal_bkernel_s {
  xal_bmodule_s* module = nullptr;
  cl_kernel kernel = nullptr;
  std::string name;
  cl_uint num_args = 0;
  // Address qualifier of each argument; empty when the driver has no
  // argument info (then pointers are recognised by value, see README).
  std::vector<cl_kernel_arg_address_qualifier> qualifiers;
  std::mutex mutex;  // clSetKernelArg + enqueue are not thread-safe
};

struct xal_bmodule_s {
  xal_bdevice_s* device = nullptr;
  cl_program program = nullptr;
  std::mutex mutex;
  std::unordered_map<std::string, std::unique_ptr<xal_bkernel_s>> kernels;
};

struct xal_backend_s {
  const xal_backend_services_t* services = nullptr;
  xal::opencl::DynamicSymbols library;
  std::vector<xal::opencl::Platform> platforms;
  std::vector<std::unique_ptr<xal_bdevice_s>> devices;
  xal::opencl::Registry<xal_bstream_s> streams;
  xal::opencl::Registry<xal_bevent_s> events;
  xal::opencl::Registry<xal_bmodule_s> modules;
  std::mutex host_mutex;
  std::unordered_map<void*, xal::opencl::HostAllocation> host_allocations;
  // Set after the library is loaded. Its `releases`: buffer releases wait
  // while a host-function gate or wait bridge is unset.
  std::shared_ptr<xal::opencl::CallbackShared> shared;

  const xal::opencl::ClApi& api() const { return library.api(); }
  xal::opencl::DeferredReleases& releases() const { return shared->releases; }

  // The device whose address range holds `ptr`, or NULL.
  xal_bdevice_s* device_of(xal_devptr_t ptr) const {
    const uint64_t slot = ptr >> xal::opencl::kAddressSpaceShift;
    if (slot == 0 || slot > devices.size()) return nullptr;
    return devices[slot - 1].get();
  }
  // (cl_mem, offset) of [ptr, ptr+bytes) in any device of the instance.
  std::optional<xal::opencl::Resolved> resolve(xal_devptr_t ptr,
                                               uint64_t bytes) const {
    const xal_bdevice_s* dev = device_of(ptr);
    if (dev == nullptr) return std::nullopt;
    return dev->memory->resolve(ptr, bytes);
  }
};

namespace xal::opencl {

// The OpenCL entry context for the shared exception barrier
// (support::guarded(Entry{services}, op, body)): an exception becomes a
// status whose message is the exception's, else `op`, recorded through
// `services` (may be null; not owned). Thread-safe.
struct Entry {
  const xal_backend_services_t* services;
  xal_status_t fail(const support::Caught& caught) const {
    return report(services, caught.status,
                  caught.what != nullptr ? caught.what : caught.operation);
  }
};
using support::guarded;

// Resolves [ptr, ptr+bytes) to a buffer of `context` (any device of the
// instance that shares it) or reports OUT_OF_BOUNDS / INVALID_ARGUMENT
// naming `op`.
xal_status_t resolve_or_report(const xal_backend_s& backend, cl_context context,
                               xal_devptr_t ptr, uint64_t bytes, const char* op,
                               Resolved& out);

// Release the CL objects of an object about to be freed (stream: waits for
// its work and its host functions first). Not thread-safe per object.
void release_stream(xal_bstream_s& stream);
void release_event(xal_bevent_s& event);
void release_module(xal_bmodule_s& module);

// Enqueues one submission on stream.queue through the stream's command log
// (see CommandLog::submit): `enqueue` returns a CL code and takes either a
// CommandLog::Batch& (a submission of several commands: each takes its event
// slot from batch.next()) or a cl_event* (one command: the slot of its
// event). Returns enqueue's code. Thread-safe; `enqueue` must not submit to
// the same stream again.
template <typename F>
cl_int submit(xal_bstream_s& stream, F&& enqueue) {
  return stream.log->submit([&](CommandLog::Batch& batch) -> cl_int {
    if constexpr (std::is_invocable_v<F&, cl_event*>) {
      return enqueue(batch.next());
    } else {
      return enqueue(batch);
    }
  });
}

// The CL error a command ended with (its execution status when negative),
// else CL_SUCCESS (also while it runs, or when the status cannot be read).
// `ev` may be NULL. Thread-safe.
cl_int command_error(const ClApi& api, cl_event ev);

// Builds `program` for `device` with xal's options (-cl-kernel-arg-info and
// XAL_OPENCL_BUILD_OPTIONS); on failure reports the build log.
xal_status_t build_program(xal_bdevice_s& device, cl_program program, const char* what);

}  // namespace xal::opencl
