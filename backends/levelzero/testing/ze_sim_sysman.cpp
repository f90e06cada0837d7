// Simulated Sysman: readings from a fixed model (100 W, 50% busy, 45 and
// 52.5 C sensors, 3 corrected cache errors, 1600/3200 MHz; the energy
// counter runs from the host clock's start, as a card's from boot). Device handles are
// the core device handles, as under ZES_ENABLE_SYSMAN=1.
#include <chrono>

#include "sim_state.h"

namespace {

int device_index(xalsim::State& s, zes_device_handle_t handle) {
  auto* device = reinterpret_cast<ze_device_handle_t>(handle);
  for (const auto& candidate : s.devices) {
    if (candidate.get() == device) return device->index;
  }
  return -1;
}

template <typename T>
ze_result_t list_for(xalsim::State& s, zes_device_handle_t device, uint32_t* count,
                     T** out, const std::vector<std::unique_ptr<T>>& all) {
  const int index = device_index(s, device);
  if (index < 0 || count == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  std::vector<T*> mine;
  for (const auto& item : all) {
    if (item->device == index) mine.push_back(item.get());
  }
  if (*count == 0 || out == nullptr) {
    *count = static_cast<uint32_t>(mine.size());
    return ZE_RESULT_SUCCESS;
  }
  *count = std::min<uint32_t>(*count, static_cast<uint32_t>(mine.size()));
  for (uint32_t i = 0; i < *count; ++i) out[i] = mine[i];
  return ZE_RESULT_SUCCESS;
}

uint64_t now_us() { return xalsim::now_ns() / 1000; }

}  // namespace

SIM_EXPORT ze_result_t zesDeviceGetState(zes_device_handle_t device, zes_device_state_t* out) {
  SIM_BEGIN("zesDeviceGetState", false);
  if (device_index(s, device) < 0 || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->reset = s.lost ? ZES_RESET_REASON_FLAG_WEDGED : 0;
  out->repaired = ZES_REPAIR_STATUS_NOT_PERFORMED;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesDeviceEnumMemoryModules(zes_device_handle_t d, uint32_t* count,
                                                  zes_mem_handle_t* out) {
  SIM_BEGIN("zesDeviceEnumMemoryModules", false);
  return list_for(s, d, count, out, s.mems);
}

SIM_EXPORT ze_result_t zesMemoryGetState(zes_mem_handle_t memory, zes_mem_state_t* out) {
  SIM_BEGIN("zesMemoryGetState", false);
  if (memory == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->health = ZES_MEM_HEALTH_OK;
  out->size = s.memory;
  out->free = s.memory - s.used[memory->device];
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesDeviceEnumPowerDomains(zes_device_handle_t d, uint32_t* count,
                                                 zes_pwr_handle_t* out) {
  SIM_BEGIN("zesDeviceEnumPowerDomains", false);
  return list_for(s, d, count, out, s.pwrs);
}

SIM_EXPORT ze_result_t zesPowerGetEnergyCounter(zes_pwr_handle_t power,
                                                zes_power_energy_counter_t* out) {
  SIM_BEGIN("zesPowerGetEnergyCounter", false);
  if (power == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->timestamp = now_us();
  out->energy = out->timestamp * 100;  // 100 W: 100 uJ per us
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesDeviceEnumTemperatureSensors(zes_device_handle_t d,
                                                       uint32_t* count,
                                                       zes_temp_handle_t* out) {
  SIM_BEGIN("zesDeviceEnumTemperatureSensors", false);
  return list_for(s, d, count, out, s.temps);
}

SIM_EXPORT ze_result_t zesTemperatureGetState(zes_temp_handle_t sensor, double* out) {
  SIM_BEGIN("zesTemperatureGetState", false);
  if (sensor == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *out = sensor->celsius;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesDeviceEnumEngineGroups(zes_device_handle_t d, uint32_t* count,
                                                 zes_engine_handle_t* out) {
  SIM_BEGIN("zesDeviceEnumEngineGroups", false);
  return list_for(s, d, count, out, s.engines);
}

SIM_EXPORT ze_result_t zesEngineGetProperties(zes_engine_handle_t engine,
                                              zes_engine_properties_t* out) {
  SIM_BEGIN("zesEngineGetProperties", false);
  if (engine == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->type = ZES_ENGINE_GROUP_ALL;
  out->onSubdevice = 0;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesEngineGetActivity(zes_engine_handle_t engine,
                                            zes_engine_stats_t* out) {
  SIM_BEGIN("zesEngineGetActivity", false);
  if (engine == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->timestamp = now_us();
  out->activeTime = out->timestamp / 2;  // 50% busy
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesDeviceEnumRasErrorSets(zes_device_handle_t d, uint32_t* count,
                                                 zes_ras_handle_t* out) {
  SIM_BEGIN("zesDeviceEnumRasErrorSets", false);
  return list_for(s, d, count, out, s.ras);
}

SIM_EXPORT ze_result_t zesRasGetProperties(zes_ras_handle_t set, zes_ras_properties_t* out) {
  SIM_BEGIN("zesRasGetProperties", false);
  if (set == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->type = set->correctable ? ZES_RAS_ERROR_TYPE_CORRECTABLE
                               : ZES_RAS_ERROR_TYPE_UNCORRECTABLE;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesRasGetState(zes_ras_handle_t set, ze_bool_t, zes_ras_state_t* out) {
  SIM_BEGIN("zesRasGetState", false);
  if (set == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  for (auto& count : out->category) count = 0;
  if (set->correctable) out->category[ZES_RAS_ERROR_CAT_CACHE_ERRORS] = 3;
  // Counts that are no hardware errors (XALSIM_ZE_RAS_SOFT).
  for (zes_ras_error_cat_t soft : {ZES_RAS_ERROR_CAT_RESET, ZES_RAS_ERROR_CAT_PROGRAMMING_ERRORS,
                                   ZES_RAS_ERROR_CAT_DRIVER_ERRORS}) {
    out->category[soft] = s.ras_soft;
  }
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesDeviceEnumFrequencyDomains(zes_device_handle_t d, uint32_t* count,
                                                     zes_freq_handle_t* out) {
  SIM_BEGIN("zesDeviceEnumFrequencyDomains", false);
  return list_for(s, d, count, out, s.freqs);
}

SIM_EXPORT ze_result_t zesFrequencyGetProperties(zes_freq_handle_t domain,
                                                 zes_freq_properties_t* out) {
  SIM_BEGIN("zesFrequencyGetProperties", false);
  if (domain == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->type = domain->type;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zesFrequencyGetState(zes_freq_handle_t domain, zes_freq_state_t* out) {
  SIM_BEGIN("zesFrequencyGetState", false);
  if (domain == nullptr || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  out->actual = domain->type == ZES_FREQ_DOMAIN_GPU ? 1600.0 : 3200.0;
  return ZE_RESULT_SUCCESS;
}
