// Table entries: lifecycle, devices, memory and host memory.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "backend.hpp"
#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {

xal_status_t fault_init(const xal_backend_init_args_t* args,
                        xal_backend_t** out_backend) {
  if (args == nullptr || args->services == nullptr || out_backend == nullptr) {
    if (args != nullptr && args->services != nullptr &&
        args->services->set_error != nullptr) {
      return args->services->set_error(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                                        "fault: init without output pointer");
    }
    return XAL_ERROR_INVALID_ARGUMENT;
  }
  FaultBackend probe(args->services);  // reports errors before the real one
  return guarded(FaultEntry{&probe}, "init", [&] {
    auto b = std::make_unique<FaultBackend>(args->services);
    const xal_status_t s = b->start(args->argument);
    if (s != XAL_SUCCESS) return s;  // ~FaultBackend shuts the target down
    *out_backend = reinterpret_cast<xal_backend_t*>(b.release());
    return XAL_SUCCESS;
  });
}

xal_status_t fault_shutdown(xal_backend_t* backend) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "shutdown", [&] {
    std::unique_ptr<FaultBackend> owned(b);
    owned->stop();
    return XAL_SUCCESS;
  });
}

xal_status_t fault_describe(xal_backend_t* backend,
                            xal_backend_describe_t* out) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "describe", [&] {
    xal_backend_describe_t inner{};
    inner.struct_size = sizeof inner;
    if (b->t.describe != nullptr) b->t.describe(b->target, &inner);
    inner.driver_version[sizeof inner.driver_version - 1] = '\0';
    common::copy_string(out->name, b->display_name);
    common::copy_string(out->driver_version, inner.driver_version);
    out->flags = XAL_BACKEND_FLAG_WRAPPER | b->target_flags;
    common::copy_string(out->note, "fault injection over '" + b->target_name +
                                       "', " +
                                       std::to_string(b->engine.rule_count()) +
                                       " rules");
    return XAL_SUCCESS;
  });
}

xal_status_t fault_device_count(xal_backend_t* backend, uint32_t* out) {
  FaultBackend* b = as_fault(backend);
  *out = static_cast<uint32_t>(b->devices.size());
  return XAL_SUCCESS;
}

xal_status_t fault_device_get(xal_backend_t* backend, uint32_t index,
                              xal_bdevice_t** out) {
  FaultBackend* b = as_fault(backend);
  if (index >= b->devices.size()) {
    return b->report(XAL_ERROR_INVALID_ARGUMENT,
                     "fault: device index " + std::to_string(index) +
                         " out of range");
  }
  *out = reinterpret_cast<xal_bdevice_t*>(b->devices[index].get());
  return XAL_SUCCESS;
}

xal_status_t fault_device_get_properties(xal_bdevice_t* device,
                                         xal_device_properties_t* out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "device_get_properties", [&] {
    const auto s = b->before(Op::device_get_properties, d, nullptr,
                             std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.device_get_properties(d->target, out);
  });
}

xal_status_t fault_device_synchronize(xal_bdevice_t* device) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "device_synchronize", [&] {
    const auto s =
        b->before(Op::device_synchronize, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.device_synchronize(d->target);
  });
}

xal_status_t fault_device_reset(xal_bdevice_t* device) {
  FaultDevice* d = as_fault(device);
  return guarded(FaultEntry{d->backend}, "device_reset",
                 [&] { return d->backend->reset_device(d); });
}

xal_status_t fault_device_get_health(xal_bdevice_t* device,
                                     xal_device_health_t* out) {
  FaultDevice* d = as_fault(device);
  return guarded(FaultEntry{d->backend}, "device_get_health",
                 [&] { return d->backend->health(d, out); });
}

xal_status_t fault_device_get_metrics(xal_bdevice_t* device,
                                      xal_device_metrics_t* out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "device_get_metrics", [&] {
    const auto s =
        b->before(Op::device_get_metrics, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.device_get_metrics != nullptr) {
      const auto m = b->t.device_get_metrics(d->target, out);
      if (m != XAL_SUCCESS) return m;
    } else {
      out->valid = 0;
    }
    xal_device_health_t h{};
    h.struct_size = sizeof h;
    if (b->health(d, &h) == XAL_SUCCESS) {
      out->health = h.state;
      out->valid |= XAL_METRIC_HEALTH;
    }
    out->xal_faults_injected = d->state.injected.load();
    return XAL_SUCCESS;
  });
}

xal_status_t fault_mem_alloc(xal_bdevice_t* device, size_t bytes,
                             xal_devptr_t* out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_alloc", [&] {
    const auto s = b->before(Op::mem_alloc, d, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_alloc(d->target, bytes, out);
  });
}

xal_status_t fault_mem_free(xal_bdevice_t* device, xal_devptr_t ptr) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_free", [&] {
    const auto s = b->before(Op::mem_free, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_free(d->target, ptr);
  });
}

xal_status_t fault_mem_get_info(xal_bdevice_t* device, uint64_t* out_free,
                                uint64_t* out_total) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_get_info", [&] {
    const auto s =
        b->before(Op::mem_get_info, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_get_info(d->target, out_free, out_total);
  });
}

xal_status_t fault_host_alloc(xal_backend_t* backend, size_t bytes,
                              uint32_t flags, void** out) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "host_alloc", [&] {
    const auto s =
        b->before(Op::host_alloc, nullptr, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.host_alloc != nullptr) {
      return b->t.host_alloc(b->target, bytes, flags, out);
    }
    // The target has none: page-aligned memory, locked when allowed.
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void* p = nullptr;
    if (::posix_memalign(&p, page, bytes) != 0 || p == nullptr) {
      return b->report(XAL_ERROR_OUT_OF_HOST_MEMORY,
                       "fault: cannot allocate " + std::to_string(bytes) +
                           " bytes of host memory");
    }
    (void)::mlock(p, bytes);
    std::lock_guard lock(b->host_mutex);
    b->own_host.emplace(p, bytes);
    *out = p;
    return XAL_SUCCESS;
  });
}

xal_status_t fault_host_free(xal_backend_t* backend, void* ptr) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "host_free", [&] {
    // The core forgets the memory whatever host_free returns (xal_backend.h,
    // "Releases"): an injected error is returned, but the memory still goes.
    const auto injected =
        b->before(Op::host_free, nullptr, nullptr, std::nullopt, 0, nullptr);
    {
      std::lock_guard lock(b->host_mutex);
      auto it = b->own_host.find(ptr);
      if (it != b->own_host.end()) {
        (void)::munlock(it->first, it->second);
        std::free(it->first);
        b->own_host.erase(it);
        return injected;
      }
    }
    if (b->t.host_free == nullptr) {
      return b->report(XAL_ERROR_INVALID_ARGUMENT,
                       "fault: host_free of memory it did not allocate");
    }
    const auto s = b->t.host_free(b->target, ptr);
    return s != XAL_SUCCESS ? s : injected;  // the detail of the one returned
  });
}

xal_status_t fault_host_register(xal_backend_t* backend, void* ptr,
                                 size_t bytes) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "host_register", [&] {
    const auto s =
        b->before(Op::host_register, nullptr, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.host_register == nullptr) return XAL_SUCCESS;  // a hint only
    return b->t.host_register(b->target, ptr, bytes);
  });
}

xal_status_t fault_host_unregister(xal_backend_t* backend, void* ptr) {
  FaultBackend* b = as_fault(backend);
  return guarded(FaultEntry{b}, "host_unregister", [&] {
    const auto s = b->before(Op::host_unregister, nullptr, nullptr,
                             std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    if (b->t.host_unregister == nullptr) return XAL_SUCCESS;
    return b->t.host_unregister(b->target, ptr);
  });
}

void* fault_device_ptr_to_host(xal_bdevice_t* device, xal_devptr_t ptr,
                               size_t bytes) {
  FaultDevice* d = as_fault(device);
  if (d->backend->t.device_ptr_to_host == nullptr) return nullptr;
  return d->backend->t.device_ptr_to_host(d->target, ptr, bytes);
}

const void* fault_get_extension(xal_backend_t*, const char* name) {
  if (name != nullptr && std::strcmp(name, XAL_FAULT_CONTROL_EXTENSION) == 0) {
    return fault_control_table();
  }
  return nullptr;
}

}  // namespace

void fill_device_entries(xal_backend_table_t& t) {
  t.init = fault_init;
  t.shutdown = fault_shutdown;
  t.describe = fault_describe;
  t.device_count = fault_device_count;
  t.device_get = fault_device_get;
  t.device_get_properties = fault_device_get_properties;
  t.device_synchronize = fault_device_synchronize;
  t.device_reset = fault_device_reset;
  t.device_get_health = fault_device_get_health;
  t.device_get_metrics = fault_device_get_metrics;
  t.mem_alloc = fault_mem_alloc;
  t.mem_free = fault_mem_free;
  t.mem_get_info = fault_mem_get_info;
  t.host_alloc = fault_host_alloc;
  t.host_free = fault_host_free;
  t.host_register = fault_host_register;
  t.host_unregister = fault_host_unregister;
  t.device_ptr_to_host = fault_device_ptr_to_host;
  t.get_extension = fault_get_extension;
}

}  // namespace xal::fault
