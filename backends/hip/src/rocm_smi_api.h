// The rocm-smi (librocm_smi64) functions the backend uses, with the layout
// of rocm_smi/rocm_smi.h (its headers are not packaged for Debian). The
// prototypes only give the function types of the symbol list
// (decltype(&name)): the backend never links rocm-smi and never calls them
// directly; rocm_smi_symbols.h lists them and metrics.cpp opens the library
// with dlopen.
#pragma once

#include <cstdint>

extern "C" {
// rsmi_status_t is an enum of rocm_smi.h; 0 is RSMI_STATUS_SUCCESS.
typedef int rsmi_status_t;

rsmi_status_t rsmi_init(uint64_t init_flags);
rsmi_status_t rsmi_shut_down(void);
rsmi_status_t rsmi_num_monitor_devices(uint32_t* num_devices);
rsmi_status_t rsmi_dev_pci_id_get(uint32_t dv_ind, uint64_t* bdfid);
// `metric`: an rsmi_temperature_metric_t (0 is RSMI_TEMP_CURRENT).
rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv_ind, uint32_t sensor_type,
                                       int metric, int64_t* temperature);
rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind,
                                     uint64_t* power);
rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t* busy_percent);
rsmi_status_t rsmi_dev_energy_count_get(uint32_t dv_ind, uint64_t* power,
                                        float* counter_resolution,
                                        uint64_t* timestamp);
rsmi_status_t rsmi_dev_pci_replay_counter_get(uint32_t dv_ind, uint64_t* counter);
}
