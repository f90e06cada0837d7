// xal_status_name, the thread-local error detail and xal_last_error.
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "error.hpp"
#include "objects.hpp"
#include "runtime.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

constinit thread_local const char* t_operation
    __attribute__((tls_model("initial-exec"))) = "";

namespace {

struct Detail {
  xal_status_t status = XAL_SUCCESS;
  std::string operation, backend, vendor_name, message;
  int64_t vendor_code = 0;
};

struct Pending {
  bool set = false;
  xal_status_t status = XAL_SUCCESS;
  int64_t vendor_code = 0;
  std::string vendor_name, message;
};

thread_local Detail t_detail;
thread_local Pending t_pending;

void record(xal_status_t status, std::string_view backend, int64_t code,
            std::string_view vendor_name, std::string_view message) {
  t_detail.status = status;
  t_detail.operation = t_operation ? t_operation : "";
  t_detail.backend = backend;
  t_detail.vendor_code = code;
  t_detail.vendor_name = vendor_name;
  t_detail.message = message;
}

void count_error(DeviceObj* device, xal_status_t status) noexcept {
  if (device && status < 0 && -status < XAL_STATUS_COUNT)
    device->state->counters.errors[-status].fetch_add(
        1, std::memory_order_relaxed);
}

}  // namespace

std::string hex(uint64_t value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, value);
  return buf;
}

xal_status_t fail(xal_status_t status, std::string_view message) {
  record(status, "", 0, "", message);
  return status;
}

xal_status_t fail(DeviceObj* device, xal_status_t status,
                  std::string_view message) {
  count_error(device, status);
  return fail(status, message);
}

xal_status_t fail_backend(const Backend* backend, DeviceObj* device,
                          xal_status_t status) {
  count_error(device, status);
  int64_t code = 0;
  std::string vendor_name, message;
  const std::string name = backend ? backend->name : std::string();
  if (!take_pending(status, &code, &vendor_name, &message))
    message = cat("backend '", name, "' returned ", xal_status_name(status));
  record(status, name, code, vendor_name, message);
  return status;
}

xal_status_t backend_set_error(xal_status_t status, int64_t vendor_code,
                               const char* vendor_name, const char* message) {
  try {
    t_pending.set = true;
    t_pending.status = status;
    t_pending.vendor_code = vendor_code;
    t_pending.vendor_name = vendor_name ? vendor_name : "";
    t_pending.message = message ? message : "";
  } catch (...) {
    t_pending.set = false;
  }
  return status;
}

bool take_pending(xal_status_t status, int64_t* vendor_code,
                  std::string* vendor_name, std::string* message) {
  if (!t_pending.set || t_pending.status != status) return false;
  t_pending.set = false;
  *vendor_code = t_pending.vendor_code;
  *vendor_name = std::move(t_pending.vendor_name);
  *message = std::move(t_pending.message);
  return true;
}

void clear_pending() noexcept { t_pending.set = false; }

xal_status_t fail_exception() noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    try {
      return fail(XAL_ERROR_OUT_OF_HOST_MEMORY, "out of host memory");
    } catch (...) {
      return XAL_ERROR_OUT_OF_HOST_MEMORY;
    }
  } catch (const std::exception& e) {
    try {
      return fail(XAL_ERROR_INTERNAL, cat("internal error: ", e.what()));
    } catch (...) {
      return XAL_ERROR_INTERNAL;
    }
  } catch (...) {
    try {
      return fail(XAL_ERROR_INTERNAL, "internal error: unknown exception");
    } catch (...) {
      return XAL_ERROR_INTERNAL;
    }
  }
}

}  // namespace xal::core

using namespace xal::core;

extern "C" {

XAL_API const char* xal_status_name(xal_status_t status) {
  switch (status) {
    case XAL_SUCCESS: return "XAL_SUCCESS";
    case XAL_NOT_READY: return "XAL_NOT_READY";
    case XAL_ERROR_INVALID_ARGUMENT: return "XAL_ERROR_INVALID_ARGUMENT";
    case XAL_ERROR_INVALID_HANDLE: return "XAL_ERROR_INVALID_HANDLE";
    case XAL_ERROR_NOT_SUPPORTED: return "XAL_ERROR_NOT_SUPPORTED";
    case XAL_ERROR_OUT_OF_MEMORY: return "XAL_ERROR_OUT_OF_MEMORY";
    case XAL_ERROR_OUT_OF_HOST_MEMORY: return "XAL_ERROR_OUT_OF_HOST_MEMORY";
    case XAL_ERROR_OUT_OF_BOUNDS: return "XAL_ERROR_OUT_OF_BOUNDS";
    case XAL_ERROR_NOT_INITIALIZED: return "XAL_ERROR_NOT_INITIALIZED";
    case XAL_ERROR_BACKEND_UNAVAILABLE: return "XAL_ERROR_BACKEND_UNAVAILABLE";
    case XAL_ERROR_ABI_MISMATCH: return "XAL_ERROR_ABI_MISMATCH";
    case XAL_ERROR_DEVICE_LOST: return "XAL_ERROR_DEVICE_LOST";
    case XAL_ERROR_HARDWARE: return "XAL_ERROR_HARDWARE";
    case XAL_ERROR_TIMEOUT: return "XAL_ERROR_TIMEOUT";
    case XAL_ERROR_ABORTED: return "XAL_ERROR_ABORTED";
    case XAL_ERROR_COLLECTIVE_MISMATCH: return "XAL_ERROR_COLLECTIVE_MISMATCH";
    case XAL_ERROR_BACKEND: return "XAL_ERROR_BACKEND";
    case XAL_ERROR_INTERNAL: return "XAL_ERROR_INTERNAL";
    default: return "XAL_STATUS_UNKNOWN";
  }
}

// Copies the calling thread's detail. Thread-safe (per-thread data).
XAL_API xal_status_t xal_last_error(xal_error_info_t* out_info) {
  try {
    if (!out_info || out_info->struct_size < sizeof(xal_error_info_t))
      return XAL_ERROR_INVALID_ARGUMENT;
    const Detail& d = t_detail;
    out_info->status = d.status;
    xal::common::copy_string(out_info->operation, d.operation);
    xal::common::copy_string(out_info->backend, d.backend);
    out_info->vendor_code = d.vendor_code;
    xal::common::copy_string(out_info->vendor_name, d.vendor_name);
    xal::common::copy_string(out_info->message, d.message);
    return XAL_SUCCESS;
  } catch (...) {
    return XAL_ERROR_INTERNAL;
  }
}

}  // extern "C"
