// xal_mem_alloc / xal_mem_free with the registry and quotas.
#include "error.hpp"
#include "partition.hpp"
#include "quota.hpp"
#include "runtime.hpp"

using namespace xal::core;

namespace {

void note_alloc(DeviceState& st, uint64_t bytes) {
  const uint64_t now = st.counters.alloc_bytes_current.fetch_add(bytes) + bytes;
  st.counters.alloc_count_current.fetch_add(1);
  uint64_t peak = st.counters.alloc_bytes_peak.load();
  while (now > peak && !st.counters.alloc_bytes_peak.compare_exchange_weak(peak, now)) {
  }
}

void note_free(DeviceState& st, uint64_t bytes) {
  st.counters.alloc_bytes_current.fetch_sub(bytes);
  st.counters.alloc_count_current.fetch_sub(1);
}

// xal_mem_free of memory xal does not own: an import is forgotten (the
// memory stays its owner's), IPC memory is refused. XAL_NOT_READY when
// `ptr` is neither.
xal_status_t free_foreign(DeviceObj* d, xal_devptr_t ptr) {
  DeviceState& st = *d->state;
  std::unique_lock lock(st.foreign_mu);
  const auto it = st.foreign.find(ptr);
  if (it == st.foreign.end()) return XAL_NOT_READY;
  if (it->second.ipc)
    return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                cat("pointer ", hex(ptr), " of device ", d->index,
                    " was opened from an IPC handle: close it with "
                    "xal_mem_close_ipc_handle"));
  st.foreign.erase(it);
  st.registry.remove(ptr);
  lock.unlock();
  const xal_status_t s = d->hdr.table->mem_import_release(d->native, ptr);
  return s == XAL_SUCCESS ? s : fail_backend(d->backend, d, s);
}

}  // namespace

extern "C" {

// Allocates device memory owned by the caller. Thread-safe.
XAL_API xal_status_t xal_mem_alloc(xal_device_t device, size_t bytes,
                                   xal_devptr_t* out_ptr) {
  return entry("xal_mem_alloc", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    trace::note_device(d->index, bytes);
    if (!out_ptr) return null_argument("out_ptr");
    if (bytes == 0)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  "cannot allocate 0 bytes (bytes must be > 0)");
    if (bytes > (uint64_t{1} << 62))
      return fail(d, XAL_ERROR_OUT_OF_MEMORY,
                  cat("allocation of ", bytes, " bytes on device ", d->index,
                      " is larger than any device memory"));
    if (xal_status_t r = refuse_if_partitioned(d, "allocate memory"); r) return r;
    if (xal_status_t q = quota_reserve(d, bytes); q != XAL_SUCCESS) return q;
    xal_devptr_t p = 0;
    const xal_status_t s = d->hdr.table->mem_alloc(d->native, bytes, &p);
    if (s != XAL_SUCCESS) {
      quota_release(d, bytes);
      return fail_backend(d->backend, d, s);
    }
    if (p == 0) {
      quota_release(d, bytes);
      return fail(d, XAL_ERROR_INTERNAL,
                  cat("backend ", d->backend->name,
                      " returned success with a NULL allocation"));
    }
    try {
      d->state->registry.add(p, bytes);
    } catch (...) {
      d->hdr.table->mem_free(d->native, p);
      quota_release(d, bytes);
      throw;
    }
    note_alloc(*d->state, bytes);
    *out_ptr = p;
    return XAL_SUCCESS;
  });
}

// Frees an allocation of `device`. Thread-safe (not with work using it).
XAL_API xal_status_t xal_mem_free(xal_device_t device, xal_devptr_t ptr) {
  return entry("xal_mem_free", [&] {
    Runtime* rt = runtime();
    DeviceObj* d = as_device(device);
    if (!d || !rt) return bad_handle(device, "device");
    trace::note_device(d->index);
    if (xal_status_t f = free_foreign(d, ptr); f != XAL_NOT_READY) return f;
    auto size = d->state->registry.remove(ptr);
    if (!size) {
      if (!rt->validation && ptr != 0) {
        const xal_status_t s = d->hdr.table->mem_free(d->native, ptr);
        return s == XAL_SUCCESS ? s : fail_backend(d->backend, d, s);
      }
      std::string other;
      {
        std::lock_guard lock(rt->partition_mu);  // the device list (error path)
        for (DeviceObj* o : rt->devices)
          if (o != d && o->state->registry.find(ptr))
            other = cat(" (it is an allocation of device ", o->index, ")");
      }
      if (other.empty())
        other = d->state->resets.load() == 0
                    ? " (already freed, never allocated, or not the start of "
                      "an allocation)"
                    : " (already freed, never allocated, not the start of an "
                      "allocation, or released by xal_device_reset)";
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("pointer ", hex(ptr), " is not a live allocation of device ",
                      d->index, other));
    }
    const xal_status_t s = d->hdr.table->mem_free(d->native, ptr);
    if (s != XAL_SUCCESS) {
      // The backend still holds it: so does xal's record (and its quota), so
      // the free can be tried again and the metrics match the device.
      d->state->registry.add(ptr, *size);
      return fail_backend(d->backend, d, s);
    }
    quota_release(d, *size);
    note_free(*d->state, *size);
    return XAL_SUCCESS;
  });
}

}  // extern "C"
