// Metrics from Sysman: memory, power and energy, temperature, engine
// activity, RAS error counts, clocks, and the device state. Each reading
// that fails is left out of `valid`; a failing Sysman never fails the call.
#include <algorithm>

#include "entries.h"
#include "errors.h"

namespace xal::levelzero {
namespace {

template <typename Handle, typename Enum>
std::vector<Handle> enumerate(Enum fn, zes_device_handle_t device) {
  uint32_t count = 0;
  if (fn == nullptr || fn(device, &count, nullptr) != ZE_RESULT_SUCCESS || count == 0) {
    return {};
  }
  std::vector<Handle> handles(count);
  if (fn(device, &count, handles.data()) != ZE_RESULT_SUCCESS) return {};
  handles.resize(count);
  return handles;
}

void read_memory(const ZeApi& api, zes_device_handle_t h, xal_device_metrics_t* out) {
  uint64_t free_bytes = 0, size = 0;
  bool any = false;
  for (zes_mem_handle_t memory :
       enumerate<zes_mem_handle_t>(api.zesDeviceEnumMemoryModules, h)) {
    zes_mem_state_t state{ZES_STRUCTURE_TYPE_MEM_STATE};
    if (api.zesMemoryGetState != nullptr &&
        api.zesMemoryGetState(memory, &state) == ZE_RESULT_SUCCESS) {
      free_bytes += state.free;
      size += state.size;
      any = true;
    }
  }
  if (any) {
    out->memory_total_bytes = size;
    out->memory_used_bytes = size - std::min(size, free_bytes);
    out->valid |= XAL_METRIC_MEMORY_TOTAL | XAL_METRIC_MEMORY_USED;
  }
}

// The energy counter of the first power domain (the card's).
bool energy_counter(const ZeApi& api, zes_device_handle_t h,
                    zes_power_energy_counter_t* out) {
  auto domains = enumerate<zes_pwr_handle_t>(api.zesDeviceEnumPowerDomains, h);
  return !domains.empty() && api.zesPowerGetEnergyCounter != nullptr &&
         api.zesPowerGetEnergyCounter(domains.front(), out) == ZE_RESULT_SUCCESS;
}

// Power from the last two samples; energy since init (sysman_start).
void read_power(const ZeApi& api, zes_device_handle_t h, SysmanSamples& samples,
                xal_device_metrics_t* out) {
  zes_power_energy_counter_t counter{};
  if (!energy_counter(api, h, &counter)) return;
  if (samples.have_energy && counter.timestamp > samples.energy_timestamp_us) {
    out->power_w = static_cast<double>(counter.energy - samples.energy_uj) /
                   static_cast<double>(counter.timestamp - samples.energy_timestamp_us);
    out->valid |= XAL_METRIC_POWER;
  }
  if (samples.have_energy_start && counter.energy >= samples.energy_at_start_uj) {
    out->energy_j = static_cast<double>(counter.energy - samples.energy_at_start_uj) / 1e6;
    out->valid |= XAL_METRIC_ENERGY;
  }
  samples.have_energy = true;
  samples.energy_uj = counter.energy;
  samples.energy_timestamp_us = counter.timestamp;
}

void read_temperature(const ZeApi& api, zes_device_handle_t h,
                      xal_device_metrics_t* out) {
  bool any = false;
  double hottest = 0.0;
  for (zes_temp_handle_t sensor :
       enumerate<zes_temp_handle_t>(api.zesDeviceEnumTemperatureSensors, h)) {
    double celsius = 0.0;
    if (api.zesTemperatureGetState != nullptr &&
        api.zesTemperatureGetState(sensor, &celsius) == ZE_RESULT_SUCCESS) {
      hottest = any ? std::max(hottest, celsius) : celsius;
      any = true;
    }
  }
  if (any) {
    out->temperature_c = hottest;
    out->valid |= XAL_METRIC_TEMPERATURE;
  }
}

void read_activity(const ZeApi& api, zes_device_handle_t h, SysmanSamples& samples,
                   xal_device_metrics_t* out) {
  if (api.zesEngineGetProperties == nullptr || api.zesEngineGetActivity == nullptr) {
    return;
  }
  for (zes_engine_handle_t engine :
       enumerate<zes_engine_handle_t>(api.zesDeviceEnumEngineGroups, h)) {
    zes_engine_properties_t properties{ZES_STRUCTURE_TYPE_ENGINE_PROPERTIES};
    if (api.zesEngineGetProperties(engine, &properties) != ZE_RESULT_SUCCESS ||
        (properties.type != ZES_ENGINE_GROUP_ALL &&
         properties.type != ZES_ENGINE_GROUP_COMPUTE_ALL)) {
      continue;
    }
    zes_engine_stats_t stats{};
    if (api.zesEngineGetActivity(engine, &stats) != ZE_RESULT_SUCCESS) return;
    if (samples.have_activity && stats.timestamp > samples.activity_timestamp_us) {
      const double busy = static_cast<double>(stats.activeTime - samples.active_us) /
                          static_cast<double>(stats.timestamp -
                                              samples.activity_timestamp_us);
      out->utilization_percent = std::clamp(busy * 100.0, 0.0, 100.0);
      out->valid |= XAL_METRIC_UTILIZATION;
    }
    samples.have_activity = true;
    samples.active_us = stats.activeTime;
    samples.activity_timestamp_us = stats.timestamp;
    return;
  }
}

void read_ras(const ZeApi& api, zes_device_handle_t h, xal_device_metrics_t* out) {
  if (api.zesRasGetProperties == nullptr || api.zesRasGetState == nullptr) return;
  for (zes_ras_handle_t set : enumerate<zes_ras_handle_t>(api.zesDeviceEnumRasErrorSets, h)) {
    zes_ras_properties_t properties{ZES_STRUCTURE_TYPE_RAS_PROPERTIES};
    zes_ras_state_t state{ZES_STRUCTURE_TYPE_RAS_STATE};
    if (api.zesRasGetProperties(set, &properties) != ZE_RESULT_SUCCESS ||
        api.zesRasGetState(set, 0, &state) != ZE_RESULT_SUCCESS) {
      continue;
    }
    // Hardware errors only, by the categories of zes_ras_error_cat_t:
    // COMPUTE_ERRORS (compute hardware), NON_COMPUTE_ERRORS (fixed-function
    // hardware) and CACHE_ERRORS (L1/L3, register file, SLM, sampler). Not
    // RESET (engine resets the driver attempted), PROGRAMMING_ERRORS
    // (exceptions raised by how workloads program the hardware),
    // DRIVER_ERRORS (driver communication) nor DISPLAY_ERRORS.
    uint64_t total = 0;
    for (zes_ras_error_cat_t category :
         {ZES_RAS_ERROR_CAT_COMPUTE_ERRORS, ZES_RAS_ERROR_CAT_NON_COMPUTE_ERRORS,
          ZES_RAS_ERROR_CAT_CACHE_ERRORS}) {
      total += state.category[category];
    }
    if (properties.type == ZES_RAS_ERROR_TYPE_CORRECTABLE) {
      out->ecc_corrected += total;
      out->valid |= XAL_METRIC_ECC_CORRECTED;
    } else {
      out->ecc_uncorrected += total;
      out->valid |= XAL_METRIC_ECC_UNCORRECTED;
    }
  }
}

void read_clocks(const ZeApi& api, zes_device_handle_t h, xal_device_metrics_t* out) {
  if (api.zesFrequencyGetProperties == nullptr || api.zesFrequencyGetState == nullptr) {
    return;
  }
  for (zes_freq_handle_t domain :
       enumerate<zes_freq_handle_t>(api.zesDeviceEnumFrequencyDomains, h)) {
    zes_freq_properties_t properties{ZES_STRUCTURE_TYPE_FREQ_PROPERTIES};
    zes_freq_state_t state{ZES_STRUCTURE_TYPE_FREQ_STATE};
    if (api.zesFrequencyGetProperties(domain, &properties) != ZE_RESULT_SUCCESS ||
        api.zesFrequencyGetState(domain, &state) != ZE_RESULT_SUCCESS ||
        state.actual < 0) {
      continue;
    }
    if (properties.type == ZES_FREQ_DOMAIN_GPU) {
      out->sm_clock_mhz = static_cast<uint32_t>(state.actual);
      out->valid |= XAL_METRIC_SM_CLOCK;
    } else if (properties.type == ZES_FREQ_DOMAIN_MEMORY) {
      out->memory_clock_mhz = static_cast<uint32_t>(state.actual);
      out->valid |= XAL_METRIC_MEMORY_CLOCK;
    }
  }
}

}  // namespace

void sysman_start(xal_bdevice_s* device) {
  zes_power_energy_counter_t counter{};
  if (energy_counter(device->backend->api(),
                     reinterpret_cast<zes_device_handle_t>(device->root), &counter)) {
    device->samples.have_energy_start = true;
    device->samples.energy_at_start_uj = counter.energy;
  }
}

xal_status_t device_get_metrics(xal_bdevice_t* device,
                                xal_device_metrics_t* out) {
  return guarded("levelzero device_get_metrics", [&]() -> xal_status_t {
    const ZeApi& api = device->backend->api();
    xal_device_health_t health{};
    health.struct_size = sizeof health;
    device_get_health(device, &health);
    // Under ZES_ENABLE_SYSMAN=1 a core device handle is a Sysman handle.
    auto h = reinterpret_cast<zes_device_handle_t>(device->root);
    if (health.state == XAL_HEALTH_OK && api.zesDeviceGetState != nullptr) {
      zes_device_state_t state{ZES_STRUCTURE_TYPE_DEVICE_STATE};
      if (api.zesDeviceGetState(h, &state) == ZE_RESULT_SUCCESS && state.reset != 0) {
        health.state = XAL_HEALTH_DEGRADED;  // Sysman says a reset is wanted
      }
    }
    out->health = health.state;
    out->valid |= XAL_METRIC_HEALTH;
    read_memory(api, h, out);
    read_temperature(api, h, out);
    read_ras(api, h, out);
    read_clocks(api, h, out);
    std::lock_guard lock(device->mutex);
    read_power(api, h, device->samples, out);
    read_activity(api, h, device->samples, out);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::levelzero
