// Platforms and devices: what the backend learns about each OpenCL device
// at init, and how it becomes xal_device_properties_t.
#pragma once

#include "dynamic_symbols.h"
#include "xal/xal.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xal::opencl {

struct DeviceInfo {
  std::string name;
  std::string vendor;
  std::string version;         // CL_DEVICE_VERSION
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string extensions;
  std::string il_version;      // CL_DEVICE_IL_VERSION, "" if none
  cl_device_type type = 0;
  uint32_t compute_units = 0;
  uint32_t clock_mhz = 0;
  uint64_t global_mem_bytes = 0;
  uint64_t max_alloc_bytes = 0;
  uint32_t base_addr_align_bytes = 0;  // sub-buffer offsets must be multiples
  uint8_t uuid[16] = {};
  bool uuid_from_driver = false;       // cl_khr_device_uuid, else a hash
  std::string pci_bus_id;              // "" without cl_khr_pci_bus_info
  bool profiling = false;              // queue profiling supported
  double peak_bandwidth_gbps = 0.0;    // declared by the user, else 0

  bool has_extension(const std::string& ext) const;
};

// A string query of a platform; "" on failure.
std::string platform_string(const ClApi& api, cl_platform_id platform,
                            cl_platform_info param);

// The platforms the loader reports (may be empty). Returns the CL code of
// clGetPlatformIDs (CL_PLATFORM_NOT_FOUND_KHR when there is none).
cl_int list_platforms(const ClApi& api, std::vector<cl_platform_id>& out);

// The devices of one platform (all types); CL_DEVICE_NOT_FOUND when none.
cl_int list_devices(const ClApi& api, cl_platform_id platform,
                    std::vector<cl_device_id>& out);

// Queries everything DeviceInfo holds. `index` is the device's index in its
// platform, used for the fallback uuid. Returns the first failing CL code.
cl_int query_device(const ClApi& api, cl_device_id device,
                    const std::string& platform_name, uint32_t index,
                    DeviceInfo& out);

// Parses XAL_OPENCL_PEAK_BANDWIDTH_GBPS: "N" for every device or
// "i=N,j=M" by device index. Returns the figure of device `index` (0 when
// not given) or nullopt with `error` set on malformed text.
std::optional<double> declared_peak_bandwidth(const char* text, uint32_t index,
                                              std::string& error);

// Fills the vendor fields of `out` (the core fills backend and indices).
// `peer_devices`: other devices share this one's context.
void fill_properties(const DeviceInfo& info, bool peer_devices,
                     xal_device_properties_t* out);

}  // namespace xal::opencl
