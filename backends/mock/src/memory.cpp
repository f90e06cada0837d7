// Mock plugin entries: device memory and host memory.
#include "entries.h"
#include "xal_common/strings.hpp"

namespace xal::mock {

xal_status_t mem_alloc(xal_bdevice_t* device, size_t bytes, xal_devptr_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_alloc", [&] {
    check_not_null(out, "mem_alloc: out_ptr");
    if (bytes == 0)
      throw Error(XAL_ERROR_INVALID_ARGUMENT, "mem_alloc: size is 0");
    const Arena::AllocResult r = d.arena().allocate(bytes);
    if (r.address == 0)
      throw Error(XAL_ERROR_OUT_OF_MEMORY,
                  "mem_alloc: out of memory on mock device " +
                      std::to_string(d.index()) + " (" + d.profile().name +
                      "): requested " + std::to_string(bytes) + " bytes, free " +
                      std::to_string(r.free) + " (largest free range " +
                      std::to_string(r.largest) + "), total " +
                      std::to_string(d.arena().capacity()));
    *out = r.address;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_free", [&] {
    if (!d.arena().release(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_free: " + hex(ptr) +
                      " is not the start of a live allocation of mock device " +
                      std::to_string(d.index()));
    return XAL_SUCCESS;
  });
}

xal_status_t mem_get_info(xal_bdevice_t* device, uint64_t* out_free, uint64_t* out_total) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_get_info", [&] {
    check_not_null(out_free, "mem_get_info: out_free");
    check_not_null(out_total, "mem_get_info: out_total");
    const uint64_t total = d.arena().capacity();
    *out_total = total;
    *out_free = total - d.arena().used();
    return XAL_SUCCESS;
  });
}

xal_status_t host_alloc(xal_backend_t* backend, size_t bytes, uint32_t flags, void** out) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "host_alloc", [&] {
    check_not_null(out, "host_alloc: out_ptr");
    if (bytes == 0) throw Error(XAL_ERROR_INVALID_ARGUMENT, "host_alloc: size is 0");
    if (flags & ~XAL_HOST_ALLOC_WRITE_COMBINED)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "host_alloc: unknown flags " + hex(flags));
    *out = b.host_alloc(bytes);
    return XAL_SUCCESS;
  });
}

xal_status_t host_free(xal_backend_t* backend, void* ptr) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "host_free", [&] {
    if (!b.host_free(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "host_free: " + hex(reinterpret_cast<uint64_t>(ptr)) +
                      " was not allocated by this mock instance");
    return XAL_SUCCESS;
  });
}

xal_status_t host_register(xal_backend_t* backend, void* ptr, size_t bytes) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "host_register", [&] {
    check_not_null(ptr, "host_register: ptr");
    if (bytes == 0) throw Error(XAL_ERROR_INVALID_ARGUMENT, "host_register: size is 0");
    b.host_register(ptr, bytes);
    return XAL_SUCCESS;
  });
}

xal_status_t host_unregister(xal_backend_t* backend, void* ptr) {
  XAL_MOCK_REQUIRE_HANDLE(backend);
  Backend& b = *as_backend(backend);
  return guarded(Entry{b.services()}, "host_unregister", [&] {
    if (!b.host_unregister(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "host_unregister: " + hex(reinterpret_cast<uint64_t>(ptr)) +
                      " is not registered");
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock
