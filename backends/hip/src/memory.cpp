// Device memory (hipMalloc), page-locked host memory (hipHostMalloc) and
// host registration (hipHostRegister).
#include "entries.h"
#include "errors.h"

namespace xal::hip {
namespace {

// Host-memory calls need some current device; the first one serves.
xal_status_t enter_any(xal_backend_t* backend) {
  return check(nullptr, select_device(backend->api(), 0), "hipSetDevice");
}

}  // namespace

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes,
                       xal_devptr_t* out_ptr) {
  return guarded(Entry{}, "hip mem_alloc", [&]() -> xal_status_t {
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    void* pointer = nullptr;
    if (xal_status_t s = check(device,
                               device->backend->api().hipMalloc(&pointer, bytes),
                               "hipMalloc");
        s != XAL_SUCCESS) {
      return s;
    }
    const auto address = reinterpret_cast<xal_devptr_t>(pointer);
    std::lock_guard lock(device->mutex);
    device->allocations[address] = device->generation;
    *out_ptr = address;
    return XAL_SUCCESS;
  });
}

// The record leaves the device before hipFree (so that an address the
// runtime hands out again is not confused with it) and goes back when
// hipFree fails, as the core keeps its own record for a retry.
xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  return guarded(Entry{}, "hip mem_free", [&]() -> xal_status_t {
    decltype(device->allocations)::node_type record;
    {
      std::lock_guard lock(device->mutex);
      record = device->allocations.extract(ptr);
      if (record.empty()) {
        return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                      "mem_free: not an allocation of HIP device " +
                          std::to_string(device->ordinal));
      }
      // A device reset released it already; after a sticky error the
      // memory goes with the device (hipDeviceReset releases it).
      if (record.mapped() != device->generation || !device->sticky.healthy()) {
        return XAL_SUCCESS;
      }
    }
    xal_status_t s = enter(device);
    if (s == XAL_SUCCESS) {
      s = check(device,
                device->backend->api().hipFree(reinterpret_cast<void*>(ptr)),
                "hipFree");
    }
    if (s != XAL_SUCCESS) {
      std::lock_guard lock(device->mutex);
      device->allocations.insert(std::move(record));  // a node: no allocation
    }
    return s;
  });
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free,
                          uint64_t* out_total) {
  return guarded(Entry{}, "hip mem_get_info", [&]() -> xal_status_t {
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    size_t free_bytes = 0, total_bytes = 0;
    if (xal_status_t s = check(
            device, device->backend->api().hipMemGetInfo(&free_bytes, &total_bytes),
            "hipMemGetInfo");
        s != XAL_SUCCESS) {
      return s;
    }
    *out_free = free_bytes;
    *out_total = total_bytes;
    return XAL_SUCCESS;
  });
}

xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags,
                        void** out_ptr) {
  return guarded(Entry{}, "hip host_alloc", [&]() -> xal_status_t {
    const HipApi& api = backend->api();
    if (api.hipHostMalloc == nullptr || api.hipHostFree == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the HIP runtime lacks hipHostMalloc");
    }
    if (xal_status_t s = enter_any(backend); s != XAL_SUCCESS) return s;
    unsigned int hip_flags = hipHostMallocDefault | hipHostMallocPortable;
    if ((flags & XAL_HOST_ALLOC_WRITE_COMBINED) != 0) {
      hip_flags |= hipHostMallocWriteCombined;
    }
    return check(nullptr, api.hipHostMalloc(out_ptr, bytes, hip_flags),
                 "hipHostMalloc");
  });
}

xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  return guarded(Entry{}, "hip host_free", [&]() -> xal_status_t {
    if (backend->api().hipHostFree == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the HIP runtime lacks hipHostFree");
    }
    return check(nullptr, backend->api().hipHostFree(ptr), "hipHostFree");
  });
}

xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes) {
  return guarded(Entry{}, "hip host_register", [&]() -> xal_status_t {
    if (backend->api().hipHostRegister == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the HIP runtime lacks hipHostRegister");
    }
    if (xal_status_t s = enter_any(backend); s != XAL_SUCCESS) return s;
    return check(nullptr,
                 backend->api().hipHostRegister(ptr, bytes,
                                                hipHostRegisterPortable),
                 "hipHostRegister");
  });
}

xal_status_t host_unregister(xal_backend_t* backend, void* ptr) {
  return guarded(Entry{}, "hip host_unregister", [&]() -> xal_status_t {
    if (backend->api().hipHostUnregister == nullptr) {
      return report(XAL_ERROR_NOT_SUPPORTED, 0, nullptr,
                    "the HIP runtime lacks hipHostUnregister");
    }
    return check(nullptr, backend->api().hipHostUnregister(ptr),
                 "hipHostUnregister");
  });
}

}  // namespace xal::hip
