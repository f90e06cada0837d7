// backend.cpp -- the instance (init, shutdown, describe: the driver, NVML
// and NCCL opened), error reporting, health and the current context.
#include "backend.h"

#include <memory>

#include "entries.h"
#include "kernels.h"
#include "nccl_loader.h"
#include "nvml_loader.h"
#include "status_map.h"
#include "table_choice.h"
#include "xal_common/strings.hpp"
#include "xalsupport/config.h"

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

namespace xal::cuda {
namespace {

using support::config;

// Releases the devices, then the instance (owned from here on).
void destroy(xal_backend_s* backend) {
  std::unique_ptr<xal_backend_s> owned(backend);
  for (auto& device : owned->devices) release_device(device.get());
}

std::string version_text(int version) {
  return std::to_string(version / 1000) + "." +
         std::to_string((version % 1000) / 10);
}

}  // namespace

xal_status_t init(const xal_backend_init_args_t* args,
                  xal_backend_t** out_backend) {
  const xal_backend_services_t* services =
      args != nullptr ? args->services : nullptr;
  auto backend = std::make_unique<xal_backend_s>();
  backend->services = services;
  return guarded(Entry{backend.get()}, __func__, [&]() -> xal_status_t {
    std::string path = config(services, "XAL_CUDA_DRIVER");
    if (path.empty()) path = "libcuda.so.1";
    std::string reason;
    if (!backend->driver.load(path, &reason)) {
      return backend->error(XAL_ERROR_BACKEND_UNAVAILABLE, "cuda: " + reason);
    }
    std::string note;
    if (backend->driver.simulated()) {
      note = "simulated driver (" + path + ")";
    }
    // NVML: never read the real card's sensors for simulated devices.
    std::string nvml_path = config(services, "XAL_CUDA_NVML");
    if (nvml_path.empty() && !backend->driver.simulated()) {
      nvml_path = "libnvidia-ml.so.1";
    }
    if (!nvml_path.empty() && nvml_path != "off" && nvml_path != "0") {
      backend->nvml = Nvml::open(nvml_path, &reason);
      if (backend->nvml == nullptr) {
        backend->log(XAL_LOG_INFO, "cuda: NVML not used: " + reason);
        note += std::string(note.empty() ? "" : "; ") + "no NVML";
      }
    }
    // NCCL drives the real driver through its own runtime: not with the
    // simulation. Used only when the table has the native entries, which
    // chosen_collectives() decided when the core asked for it.
    const std::string choice = collectives_choice();
    if (!choice.empty() && choice != "auto" && choice != "core" && choice != "peer") {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: XAL_CUDA_COLLECTIVES '" + choice +
                                "' is none of 'auto', 'core', 'peer'");
    }
    const Collectives collectives = chosen_collectives();
    const std::string nccl_path = Nccl::library_path();
    std::string nccl_note;
    const bool simulated = backend->driver.simulated();
    if (choice != "core" && choice != "peer") {
      std::string why;
      if (!nccl_path.empty() && collectives == Collectives::kNccl) {
        backend->nccl = Nccl::open(nccl_path, &why);
        if (backend->nccl != nullptr) {
          why = nccl_mismatch(*backend->nccl, simulated);
          if (!why.empty()) backend->nccl.reset();
        }
      }
      if (nccl_path.empty()) {
        nccl_note = "NCCL off (XAL_CUDA_NCCL)";
      } else if (backend->nccl == nullptr) {
        if (why.empty() && simulated && !Nccl::named()) {
          why = "the simulated driver takes only a simulated NCCL named by "
                "XAL_CUDA_NCCL";
        } else if (why.empty()) {  // not tried (see chosen_collectives): why not
          const std::unique_ptr<Nccl> probe = Nccl::open(nccl_path, &why);
          if (probe != nullptr) why = nccl_mismatch(*probe, simulated);
        }
        // A library the user named that is not used is worth a warning; the
        // default one missing is the common case.
        const bool named = Nccl::named();
        backend->log(named ? XAL_LOG_WARNING : XAL_LOG_INFO, "cuda: NCCL not used: " + why);
        if (named) {
          nccl_note = "the NCCL XAL_CUDA_NCCL names is not used (the log says why)";
        } else {
          nccl_note = simulated ? "" : "no NCCL (" + nccl_path + ")";
        }
      } else {
        const int v = backend->nccl->version();
        nccl_note = std::string(backend->nccl->simulated() ? "simulated " : "") +
                    "NCCL " + std::to_string(v / 10000) + "." +
                    std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
      }
    }
    std::string how;
    if (collectives == Collectives::kPeer) {
      how = "collectives over peer copies and xal's kernels";
    } else if (collectives == Collectives::kCore || backend->nccl == nullptr) {
      how = "collectives on the core's path";
      if (choice == "peer") {
        how += " (XAL_CUDA_COLLECTIVES=peer needs the embedded kernels and host "
               "functions on xal's threads)";
        backend->log(XAL_LOG_WARNING, "cuda: " + how);
      }
    }
    if (!nccl_note.empty() || !how.empty()) {
      note += std::string(note.empty() ? "" : "; ") + nccl_note +
              (nccl_note.empty() || how.empty() ? "" : ": ") + how;
    }
    // XAL_CUDA_HOST_FUNCS=driver: host functions straight to the driver
    // (see host_funcs.h); "thread", the default, on a thread of the stream.
    const std::string host_funcs = config(services, "XAL_CUDA_HOST_FUNCS");
    if (host_funcs == "driver") {
      backend->host_func_threads = false;
      note += std::string(note.empty() ? "" : "; ") +
              "host functions on the driver's thread (XAL_CUDA_HOST_FUNCS=driver)";
      // Seen on an H200 (driver 580): that driver runs them one at a time.
      backend->log(XAL_LOG_WARNING,
                   "cuda: XAL_CUDA_HOST_FUNCS=driver: the driver may run a context's host "
                   "functions one at a time (an H200 with driver 580 does), and the core's "
                   "collectives across backends then end in XAL_ERROR_TIMEOUT");
    } else if (!host_funcs.empty() && host_funcs != "thread") {
      return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                            "cuda: XAL_CUDA_HOST_FUNCS '" + host_funcs +
                                "' is neither 'thread' nor 'driver'");
    }
    backend->note = note;
    if (xal_status_t s = init_devices(backend.get()); s != XAL_SUCCESS) {
      destroy(backend.release());
      return s;
    }
    *out_backend = backend.release();
    return XAL_SUCCESS;
  });
}

xal_status_t shutdown(xal_backend_t* backend) {
  return guarded(Entry{nullptr}, __func__, [&]() -> xal_status_t {  // backend is gone afterwards
    destroy(backend);
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    common::copy_string(out->name, "cuda");
    common::copy_string(out->driver_version,
                        version_text(backend->driver_version));
    out->flags = backend->driver.simulated() ? XAL_BACKEND_FLAG_SIMULATED : 0u;
    // What this backend has been run on, first so that it is never cut.
    std::string note = support_note;
    if (!backend->note.empty()) note += "; " + backend->note;
    if (!kernels_embedded()) {
      note += "; no embedded kernels";
    }
    common::copy_string(out->note, note);
    return XAL_SUCCESS;
  });
}

const void* get_extension(xal_backend_t* backend, const char* name) {
  try {
    return kernels_extension(backend, name);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace xal::cuda
