// Device state: synchronize, reset (hipDeviceReset), health and metrics.
#include "entries.h"
#include "errors.h"
#include "status_map.h"

namespace xal::hip {

xal_status_t device_synchronize(xal_bdevice_t* device) {
  return guarded(Entry{}, "hip device_synchronize", [&]() -> xal_status_t {
    if (xal_status_t s = enter(device); s != XAL_SUCCESS) return s;
    return check(device, device->backend->api().hipDeviceSynchronize(),
                 "hipDeviceSynchronize");
  });
}

xal_status_t device_reset(xal_bdevice_t* device) {
  return guarded(Entry{}, "hip device_reset", [&]() -> xal_status_t {
    const HipApi& api = device->backend->api();
    if (xal_status_t s = check(device, select_device(api, device->ordinal),
                               "hipSetDevice");
        s != XAL_SUCCESS) {
      return s;
    }
    hipError_t result = api.hipDeviceReset();
    if (result != hipSuccess) {
      const StatusMapping mapping = map_status(result);
      return report(mapping.status, result, mapping.name,
                    std::string("hipDeviceReset failed: ") + mapping.name);
    }
    // hipDeviceReset destroyed every stream, event, module and allocation
    // of the device: older objects become invalid handles.
    std::lock_guard lock(device->mutex);
    device->generation += 1;
    device->sticky.clear();
    std::lock_guard peer_lock(device->backend->peer_mutex);
    std::erase_if(device->backend->peers_enabled, [&](const auto& pair) {
      return pair.first == device->ordinal || pair.second == device->ordinal;
    });
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_health(xal_bdevice_t* device,
                               xal_device_health_t* out) {
  return guarded(Entry{}, "hip device_get_health", [&]() -> xal_status_t {
    std::lock_guard lock(device->mutex);
    device->sticky.describe(out);
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_metrics(xal_bdevice_t* device,
                                xal_device_metrics_t* out) {
  return guarded(Entry{}, "hip device_get_metrics", [&]() -> xal_status_t {
    xal_device_health_t health{};
    health.struct_size = sizeof health;
    device_get_health(device, &health);
    out->health = health.state;
    out->valid |= XAL_METRIC_HEALTH;
    if (health.state == XAL_HEALTH_OK &&
        select_device(device->backend->api(), device->ordinal) == hipSuccess) {
      size_t free_bytes = 0, total_bytes = 0;
      if (device->backend->api().hipMemGetInfo(&free_bytes, &total_bytes) ==
          hipSuccess) {
        out->memory_total_bytes = total_bytes;
        out->memory_used_bytes = total_bytes - free_bytes;
        out->valid |= XAL_METRIC_MEMORY_TOTAL | XAL_METRIC_MEMORY_USED;
      }
    }
    if (device->smi_index >= 0) {
      const auto index = static_cast<uint32_t>(device->smi_index);
      const RocmSmi& smi = device->backend->smi;
      smi.read(index, out);
      // Energy since init (the card's counter runs from boot).
      double energy_uj = 0.0;
      if (device->energy_start_valid && smi.energy_uj(index, &energy_uj) &&
          energy_uj >= device->energy_start_uj) {
        out->energy_j = (energy_uj - device->energy_start_uj) / 1e6;
        out->valid |= XAL_METRIC_ENERGY;
      }
    }
    return XAL_SUCCESS;
  });
}

}  // namespace xal::hip
