// device.cpp -- device enumeration, properties, health, reset and metrics.
#include <cstring>
#include <utility>

#include "backend.h"
#include "entries.h"
#include "nccl_loader.h"
#include "nvml_loader.h"
#include "status_map.h"
#include "xal_common/strings.hpp"

namespace xal::cuda {

namespace {

// A CUDA UUID as NVML spells it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
std::string nvml_uuid(const CUuuid& uuid) {
  static const char kHex[] = "0123456789abcdef";
  std::string text = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    text += kHex[byte >> 4];
    text += kHex[byte & 0xf];
  }
  return text;
}

int attribute(const DriverSymbols& d, CUdevice_attribute which, CUdevice dev) {
  int value = 0;
  if (d.cuDeviceGetAttribute(&value, which, dev) != CUDA_SUCCESS) return 0;
  return value;
}


}  // namespace

xal_status_t init_devices(xal_backend_t* backend) {
  const DriverSymbols& d = backend->driver;
  CUresult r = d.cuInit(0);
  constexpr xal_status_t kUnavailable = XAL_ERROR_BACKEND_UNAVAILABLE;
  if (r != CUDA_SUCCESS) return backend->fail(r, "cuInit", nullptr, kUnavailable);
  if ((r = d.cuDriverGetVersion(&backend->driver_version)) != CUDA_SUCCESS) {
    return backend->fail(r, "cuDriverGetVersion", nullptr, kUnavailable);
  }
  int count = 0;
  if ((r = d.cuDeviceGetCount(&count)) != CUDA_SUCCESS) {
    return backend->fail(r, "cuDeviceGetCount", nullptr, kUnavailable);
  }
  if (count <= 0) {
    return backend->error(XAL_ERROR_BACKEND_UNAVAILABLE,
                          "cuda: the driver reports no CUDA device");
  }
  for (int i = 0; i < count; ++i) {
    auto device = std::make_unique<xal_bdevice_s>();
    device->backend = backend;
    device->index = static_cast<uint32_t>(i);
    if ((r = d.cuDeviceGet(&device->device, i)) != CUDA_SUCCESS) {
      return backend->fail(r, "cuDeviceGet", nullptr, kUnavailable);
    }
    if ((r = d.cuDevicePrimaryCtxRetain(&device->context, device->device)) !=
        CUDA_SUCCESS) {
      return backend->fail(r, "cuDevicePrimaryCtxRetain", nullptr, kUnavailable);
    }
    device->peer_state.assign(static_cast<size_t>(count), -1);
    backend->devices.push_back(std::move(device));
  }
  // NVML numbers cards its own way (not CUDA_VISIBLE_DEVICES, nor CUDA's
  // order): match by PCI bus id, else by UUID.
  if (backend->nvml != nullptr) {
    for (auto& device : backend->devices) {
      char bus[32] = {};
      if (d.cuDeviceGetPCIBusId != nullptr &&
          d.cuDeviceGetPCIBusId(bus, sizeof bus, device->device) ==
              CUDA_SUCCESS) {
        device->nvml_device = backend->nvml->find_device(bus);
      }
      CUuuid uuid{};
      if (device->nvml_device == nullptr && d.cuDeviceGetUuid != nullptr &&
          d.cuDeviceGetUuid(&uuid, device->device) == CUDA_SUCCESS) {
        device->nvml_device =
            backend->nvml->find_device_by_uuid(nvml_uuid(uuid).c_str());
      }
      if (device->nvml_device == nullptr) {
        backend->log(XAL_LOG_INFO, "cuda: NVML has no card for device " +
                                       std::to_string(device->index) +
                                       " (PCI " + bus + "): no sensors");
        continue;
      }
      device->energy_valid = backend->nvml->energy_mj(device->nvml_device,
                                                      &device->energy_base_mj);
      std::string why;
      device->xid_watched = backend->nvml->watch_xids(device->nvml_device, &why);
      if (!device->xid_watched) {
        backend->log(XAL_LOG_INFO, "cuda: no Xid events for device " +
                                       std::to_string(device->index) + ": " + why);
      }
    }
  }
  return XAL_SUCCESS;
}

// The objects are taken out under the device's lock and released without
// it: a stream's synchronize, and the host functions its release runs, may
// wait for threads that call the backend on this device (stream_destroy).
void release_device(xal_bdevice_t* device) {
  const DriverSymbols& d = device->backend->driver;
  decltype(device->modules) modules;
  decltype(device->events) events;
  decltype(device->streams) streams;
  decltype(device->allocations) allocations;
  decltype(device->ipc_opened) ipc_opened;
  uint64_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(device->objects_mutex);
    modules.swap(device->modules);
    events.swap(device->events);
    streams.swap(device->streams);
    allocations.swap(device->allocations);
    ipc_opened.swap(device->ipc_opened);
    device->stale_allocations.clear();
    device->imports.clear();  // the caller's memory: only forgotten
    generation = device->generation.load();
  }
  if (!device->unhealthy.load() && device->make_current() == CUDA_SUCCESS) {
    for (auto& [key, module] : modules) {
      if (module->generation == generation) d.cuModuleUnload(module->module);
    }
    for (auto& [key, event] : events) {
      if (event->generation == generation) d.cuEventDestroy(event->event);
    }
    // An imported stream is the caller's: waited for, not destroyed.
    for (auto& [key, stream] : streams) {
      if (stream->generation == generation) {
        d.cuStreamSynchronize(stream->stream);
        if (stream->owned) d.cuStreamDestroy(stream->stream);
      }
    }
    for (auto& [ptr, gen] : allocations) {
      if (gen == generation) d.cuMemFree(ptr);
    }
    for (auto& [ptr, mapping] : ipc_opened) {
      device->ipc_owners.remove(ptr);
      if (mapping.generation == generation && d.cuIpcCloseMemHandle != nullptr) {
        d.cuIpcCloseMemHandle(ptr);
      }
    }
  }
  modules.clear();
  events.clear();
  streams.clear();  // runs the host functions the driver never reached
  d.cuDevicePrimaryCtxRelease(device->device);
  device->context = nullptr;
}

xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count) {
  *out_count = static_cast<uint32_t>(backend->devices.size());
  return XAL_SUCCESS;
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index,
                        xal_bdevice_t** out_device) {
  if (index >= backend->devices.size()) {
    return backend->error(XAL_ERROR_INVALID_ARGUMENT,
                          "cuda: device index " + std::to_string(index) +
                              " out of range");
  }
  *out_device = backend->devices[index].get();
  return XAL_SUCCESS;
}

xal_status_t device_get_properties(xal_bdevice_t* device,
                                   xal_device_properties_t* out) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const DriverSymbols& d = backend->driver;
    const CUdevice dev = device->device;
    char name[256] = {};
    CUresult r = d.cuDeviceGetName(name, sizeof name - 1, dev);
    if (r != CUDA_SUCCESS) return backend->fail(r, "cuDeviceGetName", device);
    size_t total = 0;
    if ((r = d.cuDeviceTotalMem(&total, dev)) != CUDA_SUCCESS) {
      return backend->fail(r, "cuDeviceTotalMem", device);
    }
    common::copy_string(out->name, name);
    common::copy_string(out->vendor, "NVIDIA");
    out->kind = XAL_DEVICE_KIND_GPU;
    out->parent_index = -1;
    std::memset(out->uuid, 0, sizeof out->uuid);
    CUuuid uuid{};
    if (d.cuDeviceGetUuid != nullptr &&
        d.cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS) {
      std::memcpy(out->uuid, uuid.bytes, sizeof out->uuid);
    }
    out->pci_bus_id[0] = '\0';
    if (d.cuDeviceGetPCIBusId != nullptr) {
      char bus[32] = {};
      if (d.cuDeviceGetPCIBusId(bus, sizeof bus, dev) == CUDA_SUCCESS) {
        common::copy_string(out->pci_bus_id, common::to_lower(bus));
      }
    }
    out->memory_bytes = total;
    out->compute_units = static_cast<uint32_t>(
        attribute(d, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    out->core_clock_mhz = static_cast<uint32_t>(
        attribute(d, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev) / 1000);
    const int mem_khz = attribute(d, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev);
    const int bus_bits =
        attribute(d, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev);
    out->memory_clock_mhz = static_cast<uint32_t>(mem_khz / 1000);
    out->memory_bus_width_bits = static_cast<uint32_t>(bus_bits);
    // Double data rate: two transfers per memory clock.
    out->peak_memory_bandwidth_gbps =
        2.0 * static_cast<double>(mem_khz) * 1e3 * (bus_bits / 8.0) / 1e9;
    uint64_t caps = XAL_DEVICE_CAP_HOST_MEMORY | XAL_DEVICE_CAP_EVENT_TIMING |
                    XAL_DEVICE_CAP_RESET;
    if (d.cuMemcpyPeerAsync != nullptr) caps |= XAL_DEVICE_CAP_PEER_COPY;
    if (d.cuModuleLoadDataEx != nullptr && d.cuModuleGetFunction != nullptr &&
        d.cuLaunchKernel != nullptr && d.cuModuleUnload != nullptr) {
      caps |= XAL_DEVICE_CAP_KERNELS;
    }
    if (backend->nccl != nullptr) caps |= XAL_DEVICE_CAP_COLLECTIVES;
    if (device->nvml_device != nullptr) caps |= XAL_DEVICE_CAP_METRICS;
    if (backend->driver.simulated()) caps |= XAL_DEVICE_CAP_SIMULATED;
    if (driver_can_import_memory(backend)) caps |= XAL_DEVICE_CAP_MEM_IMPORT;
    if (driver_can_import_streams(backend)) caps |= XAL_DEVICE_CAP_STREAM_IMPORT;
    if (driver_can_share_memory(backend)) caps |= XAL_DEVICE_CAP_IPC;
    out->capabilities = caps;
    out->max_allocation_bytes = total;
    return XAL_SUCCESS;
  });
}

xal_status_t device_synchronize(xal_bdevice_t* device) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    if (xal_status_t s = device->check_health(); s != XAL_SUCCESS) return s;
    CUresult r = device->make_current();
    if (r == CUDA_SUCCESS) r = backend->driver.cuCtxSynchronize();
    return r == CUDA_SUCCESS ? XAL_SUCCESS
                             : backend->fail(r, "cuCtxSynchronize", device);
  });
}

namespace {

// Runs a little work on the device's context after its reset: a sticky
// error the reset did not clear shows here (after some, 700 and the like,
// the driver says the process must be restarted). Returns the result and
// the call that failed.
std::pair<CUresult, const char*> probe_after_reset(xal_bdevice_t* device) {
  const DriverSymbols& d = device->backend->driver;
  if (CUresult r = device->make_current(); r != CUDA_SUCCESS) return {r, "cuCtxSetCurrent"};
  CUdeviceptr scratch = 0;
  if (CUresult r = d.cuMemAlloc(&scratch, 256); r != CUDA_SUCCESS) return {r, "cuMemAlloc"};
  std::pair<CUresult, const char*> result{d.cuMemsetD8Async(scratch, 0, 256, nullptr),
                                          "cuMemsetD8Async"};
  if (result.first == CUDA_SUCCESS) result = {d.cuCtxSynchronize(), "cuCtxSynchronize"};
  if (const CUresult freed = d.cuMemFree(scratch);
      result.first == CUDA_SUCCESS && freed != CUDA_SUCCESS) {
    result = {freed, "cuMemFree"};
  }
  return result;
}

}  // namespace

xal_status_t device_reset(xal_bdevice_t* device) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    const DriverSymbols& d = backend->driver;
    {
      std::lock_guard<std::mutex> lock(device->objects_mutex);
      const uint64_t generation = device->generation.load();
      // Release the driver objects while the context still exists; on a
      // context with a sticky error these calls fail, which is expected.
      if (device->make_current() == CUDA_SUCCESS) {
        for (auto& [key, module] : device->modules) {
          if (module->generation == generation) d.cuModuleUnload(module->module);
        }
        for (auto& [key, event] : device->events) {
          if (event->generation == generation) d.cuEventDestroy(event->event);
        }
        // An imported stream goes with the context, its owner's handle too.
        for (auto& [key, stream] : device->streams) {
          if (stream->generation == generation && stream->owned) {
            d.cuStreamDestroy(stream->stream);
          }
        }
      }
      // The reset frees every allocation; the caller's frees of them
      // succeed without a driver call (mem_free).
      for (const auto& [ptr, gen] : device->allocations) {
        (void)gen;
        ++device->stale_allocations[ptr];
      }
      device->allocations.clear();
      device->generation.fetch_add(1, std::memory_order_acq_rel);
    }
    // A call after the reset that still fails: with a sticky error, the
    // driver keeps it for the process (cuda.h, after 700: "the process must
    // be terminated and relaunched"), and the device stays lost.
    auto still_fails = [&](CUresult failed, const char* call) {
      xal_backend_s::Failure failure = backend->describe_failure(failed, call, nullptr);
      failure.message = "cuda: device " + std::to_string(device->index) +
                        " still fails after cuDevicePrimaryCtxReset: " +
                        failure.message.substr(std::strlen("cuda: "));
      if (is_sticky(failed)) {
        failure.message += "; the driver keeps this error until the process ends";
        device->mark_kept_by_reset(failed, failure.status, failure.message);
      }
      return backend->report(failure);
    };
    CUresult r = d.cuDevicePrimaryCtxReset(device->device);
    if (r != CUDA_SUCCESS) {
      return backend->fail(r, "cuDevicePrimaryCtxReset", nullptr);
    }
    // The retained primary context comes back on its next use; take its
    // (possibly new) handle. An H200's driver (580) answers 700 here after
    // CUDA_ERROR_ILLEGAL_ADDRESS (2026-12-04).
    CUcontext context = nullptr;
    if ((r = d.cuDevicePrimaryCtxRetain(&context, device->device)) !=
        CUDA_SUCCESS) {
      return still_fails(r, "cuDevicePrimaryCtxRetain");
    }
    d.cuDevicePrimaryCtxRelease(device->device);
    device->context = context;
    // Peer mappings went with the old context, both from it and to it.
    for (auto& other : backend->devices) {
      std::lock_guard<std::mutex> lock(other->peer_mutex);
      if (other.get() == device) {
        device->peer_state.assign(device->peer_state.size(), -1);
      } else if (device->index < other->peer_state.size()) {
        other->peer_state[device->index] = -1;
      }
    }
    {
      std::lock_guard<std::mutex> lock(device->health_mutex);
      device->sticky_result = CUDA_SUCCESS;
      device->sticky_status = XAL_SUCCESS;
      device->sticky_message.clear();
      device->reset_did_not_clear = false;
      device->unhealthy.store(false, std::memory_order_release);
    }
    if (const auto [probe, call] = probe_after_reset(device); probe != CUDA_SUCCESS) {
      return still_fails(probe, call);
    }
    // The reset dropped the context's registrations of page-locked memory.
    reregister_host_memory(backend);
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_health(xal_bdevice_t* device, xal_device_health_t* out) {
  return guarded(Entry{device->backend}, __func__, [&]() -> xal_status_t {
    std::lock_guard<std::mutex> lock(device->health_mutex);
    if (!device->unhealthy.load()) {
      out->state = XAL_HEALTH_OK;
      out->sticky_status = XAL_SUCCESS;
      out->vendor_code = 0;
      out->message[0] = '\0';
      return XAL_SUCCESS;
    }
    out->state = device->sticky_status == XAL_ERROR_DEVICE_LOST
                     ? XAL_HEALTH_LOST
                     : XAL_HEALTH_ERROR;
    out->sticky_status = device->sticky_status;
    out->vendor_code = device->sticky_result;
    common::copy_string(out->message, device->sticky_message);
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_metrics(xal_bdevice_t* device,
                                xal_device_metrics_t* out) {
  xal_backend_s* backend = device->backend;
  return guarded(Entry{backend}, __func__, [&]() -> xal_status_t {
    out->health = device->unhealthy.load() ? XAL_HEALTH_ERROR : XAL_HEALTH_OK;
    out->valid |= XAL_METRIC_HEALTH;
    if (!device->unhealthy.load() && device->make_current() == CUDA_SUCCESS) {
      size_t free_bytes = 0, total = 0;
      if (backend->driver.cuMemGetInfo(&free_bytes, &total) == CUDA_SUCCESS) {
        out->memory_used_bytes = total - free_bytes;
        out->memory_total_bytes = total;
        out->valid |= XAL_METRIC_MEMORY_USED | XAL_METRIC_MEMORY_TOTAL;
      }
    }
    if (backend->nvml != nullptr) {
      backend->nvml->fill(device->nvml_device, device->energy_base_mj,
                          device->energy_valid, out);
      if (device->xid_watched) {
        out->last_xid = backend->nvml->last_xid(device->nvml_device);
        out->valid |= XAL_METRIC_LAST_XID;
      }
    }
    if (backend->driver.simulated()) out->valid |= XAL_METRIC_SIMULATED;
    return XAL_SUCCESS;
  });
}

}  // namespace xal::cuda
