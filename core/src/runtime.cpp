// Runtime object, common checks.
#include "runtime.hpp"

#include "host_memory.hpp"
#include "peer_copy.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

std::atomic<Runtime*> g_runtime{nullptr};

namespace {
std::atomic<uint64_t> g_epochs{0};
}  // namespace

Runtime::Runtime() : epoch(g_epochs.fetch_add(1, std::memory_order_relaxed) + 1) {}
Runtime::~Runtime() = default;

xal_status_t not_initialized() {
  return fail(XAL_ERROR_NOT_INITIALIZED,
              cat("xal is not initialised: call xal_init first (",
                  t_operation, ")"));
}

xal_status_t bad_handle(const void* handle, const char* what) {
  if (!runtime()) return not_initialized();
  if (!handle) return fail(XAL_ERROR_INVALID_HANDLE, cat(what, " is NULL"));
  return fail(XAL_ERROR_INVALID_HANDLE,
              cat(what, " ", handle,
                  " is not a live handle of that kind (destroyed, freed by "
                  "xal_shutdown, or another kind of object)"));
}

xal_status_t null_argument(const char* what) {
  return fail(XAL_ERROR_INVALID_ARGUMENT, cat(what, " is NULL"));
}

xal_status_t bad_struct(const void* p, size_t struct_size, size_t needed,
                        const char* what) {
  if (!p) return null_argument(what);
  return fail(XAL_ERROR_INVALID_ARGUMENT,
              cat(what, "->struct_size is ", struct_size,
                  ", smaller than the ", needed,
                  " bytes of its first version (set it to sizeof)"));
}

namespace {

// "it lies in an allocation of device N (backend)" when `ptr` is inside a
// live allocation of another device; empty otherwise.
std::string owner_elsewhere(const Runtime* rt, const DeviceObj* device, uint64_t ptr) {
  for (DeviceObj* other : rt->devices) {
    Registry::Range unused;
    if (other != device && other->state->registry.contains(ptr, 1, &unused))
      return cat("it lies in an allocation of device ", other->index, " (",
                 other->backend->name, "), not of this device");
  }
  return {};
}

// Why [ptr, +bytes) is not inside a live allocation of `device`, given the
// allocation `near` at or below ptr (size 0: none).
std::string why_outside(const Runtime* rt, const DeviceObj* device, uint64_t ptr, uint64_t bytes,
                        const Registry::Range& near) {
  if (std::string other = owner_elsewhere(rt, device, ptr); !other.empty()) return other;
  if (near.size == 0) return "no allocation of the device lies at or below it";
  if (ptr - near.base < near.size)
    return cat("it runs past the end of the allocation ", hex(near.base), " of ", near.size,
               " bytes by ", bytes - (near.base + near.size - ptr), " bytes");
  return cat("it is not inside a live allocation (nearest below: ", hex(near.base), " of ",
             near.size, " bytes; freed memory or a pointer of another device)");
}

}  // namespace

xal_status_t check_range(const Runtime* rt, DeviceObj* device, uint64_t ptr,
                         uint64_t bytes, const char* what) {
  if (!rt->validation) return XAL_SUCCESS;
  Registry::Range near;
  if (device->state->registry.contains(ptr, bytes, &near)) return XAL_SUCCESS;
  return fail(device, XAL_ERROR_OUT_OF_BOUNDS,
              cat(what, " range [", hex(ptr), ", +", bytes, " bytes) on device ",
                  device->index, " (", device->backend->name, "): ",
                  why_outside(rt, device, ptr, bytes, near)));
}

}  // namespace xal::core
