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

xal_status_t check_range(const Runtime* rt, DeviceObj* device, uint64_t ptr,
                         uint64_t bytes, const char* what) {
  if (!rt->validation) return XAL_SUCCESS;
  Registry::Range near;
  if (device->state->registry.contains(ptr, bytes, &near)) return XAL_SUCCESS;
  std::string where;
  if (near.size == 0) {
    where = "no allocation of the device lies at or below it";
  } else if (ptr - near.base < near.size) {
    where = cat("it runs past the end of the allocation ", hex(near.base),
                " of ", near.size, " bytes by ",
                bytes - (near.base + near.size - ptr), " bytes");
  } else {
    where = cat("it is not inside a live allocation (nearest below: ",
                hex(near.base), " of ", near.size,
                " bytes; freed memory or a pointer of another device)");
  }
  return fail(device, XAL_ERROR_OUT_OF_BOUNDS,
              cat(what, " range [", hex(ptr), ", +", bytes, " bytes) on device ",
                  device->index, " (", device->backend->name, "): ", where));
}

}  // namespace xal::core
