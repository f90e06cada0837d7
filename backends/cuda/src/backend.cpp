// backend.cpp -- error reporting, health and the current context.
#include "backend.h"

#include "nccl_loader.h"
#include "nvml_loader.h"
#include "status_map.h"

namespace {

// The message of the calling thread's last error (last_error_message()).
thread_local std::string t_last_message;

void record(const xal_backend_services_t* services, xal_status_t status, int64_t code,
            const char* name, const std::string& message) {
  t_last_message = message;
  if (services != nullptr && services->set_error != nullptr) {
    services->set_error(status, code, name, message.c_str());
  }
}

}  // namespace

xal_backend_s::~xal_backend_s() = default;

xal_status_t xal_backend_s::fail(CUresult result, const char* call,
                                 xal_bdevice_s* device, xal_status_t as) {
  const Failure failure = describe_failure(result, call, device, as);
  if (failure.status == XAL_SUCCESS || failure.status == XAL_NOT_READY) {
    return failure.status;
  }
  return report(failure);
}

xal_backend_s::Failure xal_backend_s::describe_failure(CUresult result,
                                                       const char* call,
                                                       xal_bdevice_s* device,
                                                       xal_status_t as) {
  Failure failure;
  failure.result = result;
  failure.status = xal::cuda::map_result(result);
  if (failure.status == XAL_SUCCESS || failure.status == XAL_NOT_READY) {
    return failure;
  }
  if (as != XAL_SUCCESS) failure.status = as;
  const char* name = nullptr;
  if (driver.cuGetErrorName == nullptr ||
      driver.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) {
    name = xal::cuda::fallback_name(result);
  }
  failure.name = name;
  const char* text = nullptr;
  if (driver.cuGetErrorString == nullptr ||
      driver.cuGetErrorString(result, &text) != CUDA_SUCCESS ||
      text == nullptr) {
    text = "unrecognised error code";
  }
  failure.message = std::string("cuda: ") + call + " failed: " + text + " (" +
                    name + ", " + std::to_string(result) + ")";
  if (device != nullptr) {
    failure.message += " on device " + std::to_string(device->index);
    if (xal::cuda::is_sticky(result)) {
      failure.message += "; the device needs xal_device_reset";
      device->mark_unhealthy(result, failure.status, failure.message);
    }
  }
  return failure;
}

xal_status_t xal_backend_s::report(const Failure& failure) const {
  record(services, failure.status, static_cast<int64_t>(failure.result), failure.name,
         failure.message);
  return failure.status;
}

xal_status_t xal_backend_s::error(xal_status_t status,
                                  const std::string& message) const {
  record(services, status, 0, nullptr, message);
  return status;
}

void xal_backend_s::log(int level, const std::string& message) const {
  if (services != nullptr && services->log != nullptr) {
    services->log(level, "cuda", message.c_str());
  }
}

CUresult xal_bdevice_s::make_current() {
  const xal::cuda::DriverSymbols& d = backend->driver;
  CUcontext current = nullptr;
  CUresult r = d.cuCtxGetCurrent(&current);
  if (r != CUDA_SUCCESS) return r;
  if (current == context) return CUDA_SUCCESS;
  xal::cuda::ContextRestore& restore = xal::cuda::t_context_restore;
  if (restore.depth > 0 && !restore.changed && current != nullptr) {
    restore.previous = current;
    restore.changed = true;
  }
  return d.cuCtxSetCurrent(context);
}

namespace xal::cuda {

EntryScope::~EntryScope() {
  ContextRestore& restore = t_context_restore;
  if (--restore.depth > 0 || !restore.changed) return;
  restore.changed = false;
  if (backend_ != nullptr) (void)backend_->driver.cuCtxSetCurrent(restore.previous);
}

}  // namespace xal::cuda

xal_status_t xal_bdevice_s::check_health() {
  if (!unhealthy.load(std::memory_order_acquire)) return XAL_SUCCESS;
  std::lock_guard<std::mutex> lock(health_mutex);
  const char* name = nullptr;
  const xal::cuda::DriverSymbols& d = backend->driver;
  if (d.cuGetErrorName(sticky_result, &name) != CUDA_SUCCESS || !name) {
    name = xal::cuda::fallback_name(sticky_result);
  }
  std::string message = "cuda: device " + std::to_string(index) + " has a sticky error (" +
                        name +
                        (reset_did_not_clear
                             ? ") that xal_device_reset did not clear: restart the process "
                               "to use the device again. Reported: "
                             : "); call xal_device_reset. First report: ") +
                        sticky_message;
  record(backend->services, sticky_status, sticky_result, name, message);
  return sticky_status;
}

void xal_bdevice_s::mark_unhealthy(CUresult result, xal_status_t status,
                                   const std::string& message) {
  std::lock_guard<std::mutex> lock(health_mutex);
  if (unhealthy.load(std::memory_order_relaxed)) return;  // keep the first
  sticky_result = result;
  sticky_status = status;
  sticky_message = message;
  unhealthy.store(true, std::memory_order_release);
}

void xal_bdevice_s::mark_kept_by_reset(CUresult result, xal_status_t status,
                                       const std::string& message) {
  std::lock_guard<std::mutex> lock(health_mutex);
  sticky_result = result;
  sticky_status = status;
  sticky_message = message;
  reset_did_not_clear = true;
  unhealthy.store(true, std::memory_order_release);
}

namespace xal::cuda {

const std::string& last_error_message() { return t_last_message; }

xal_status_t stale_object(const xal_backend_s* backend, const char* what) {
  return backend->error(XAL_ERROR_INVALID_HANDLE,
                        std::string("cuda: the ") + what +
                            " was invalidated by xal_device_reset");
}

}  // namespace xal::cuda
