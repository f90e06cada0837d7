#include "device.h"

#include "xal_common/strings.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace xal::opencl {
namespace common = xal::common;
namespace {

std::string device_string(const ClApi& api, cl_device_id device,
                          cl_device_info param) {
  size_t size = 0;
  if (api.clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string value(size, '\0');
  if (api.clGetDeviceInfo(device, param, size, value.data(), nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  value.resize(std::strlen(value.c_str()));
  return value;
}

template <typename T>
cl_int device_value(const ClApi& api, cl_device_id device, cl_device_info param,
                    T& out) {
  return api.clGetDeviceInfo(device, param, sizeof(T), &out, nullptr);
}

// FNV-1a, 64 bits.
uint64_t fnv1a(std::string_view text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

void hashed_uuid(const std::string& key, uint8_t (&uuid)[16]) {
  const uint64_t a = fnv1a(key, 0xcbf29ce484222325ull);
  const uint64_t b = fnv1a(key, 0x84222325cbf29ce4ull);
  std::memcpy(uuid, &a, 8);
  std::memcpy(uuid + 8, &b, 8);
  uuid[6] = static_cast<uint8_t>((uuid[6] & 0x0f) | 0x50);  // name-based
  uuid[8] = static_cast<uint8_t>((uuid[8] & 0x3f) | 0x80);  // RFC 4122
}

}  // namespace

bool DeviceInfo::has_extension(const std::string& ext) const {
  for (const std::string& e : xal::common::split(extensions, " ")) {
    if (e == ext) return true;
  }
  return false;
}

std::string platform_string(const ClApi& api, cl_platform_id platform,
                            cl_platform_info param) {
  size_t size = 0;
  if (api.clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS ||
      size == 0) {
    return {};
  }
  std::string value(size, '\0');
  if (api.clGetPlatformInfo(platform, param, size, value.data(), nullptr) !=
      CL_SUCCESS) {
    return {};
  }
  value.resize(std::strlen(value.c_str()));
  return value;
}

cl_int list_platforms(const ClApi& api, std::vector<cl_platform_id>& out) {
  cl_uint count = 0;
  cl_int rc = api.clGetPlatformIDs(0, nullptr, &count);
  if (rc != CL_SUCCESS) return rc;
  out.assign(count, nullptr);
  if (count == 0) return CL_SUCCESS;
  rc = api.clGetPlatformIDs(count, out.data(), &count);
  out.resize(rc == CL_SUCCESS ? count : 0);
  return rc;
}

cl_int list_devices(const ClApi& api, cl_platform_id platform,
                    std::vector<cl_device_id>& out) {
  cl_uint count = 0;
  cl_int rc = api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 0, nullptr, &count);
  if (rc != CL_SUCCESS) return rc;
  out.assign(count, nullptr);
  if (count == 0) return CL_DEVICE_NOT_FOUND;
  rc = api.clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, count, out.data(), &count);
  out.resize(rc == CL_SUCCESS ? count : 0);
  return rc;
}

cl_int query_device(const ClApi& api, cl_device_id device,
                    const std::string& platform_name, uint32_t index,
                    DeviceInfo& out) {
  out.name = device_string(api, device, CL_DEVICE_NAME);
  out.vendor = device_string(api, device, CL_DEVICE_VENDOR);
  out.version = device_string(api, device, CL_DEVICE_VERSION);
  out.driver_version = device_string(api, device, CL_DRIVER_VERSION);
  out.extensions = device_string(api, device, CL_DEVICE_EXTENSIONS);
  out.il_version = device_string(api, device, CL_DEVICE_IL_VERSION);

  cl_uint units = 0, clock = 0, align_bits = 0;
  cl_ulong global = 0, max_alloc = 0;
  cl_command_queue_properties queue_props = 0;
  cl_int rc = device_value(api, device, CL_DEVICE_TYPE, out.type);
  if (rc == CL_SUCCESS) rc = device_value(api, device, CL_DEVICE_MAX_COMPUTE_UNITS, units);
  if (rc == CL_SUCCESS) rc = device_value(api, device, CL_DEVICE_MAX_CLOCK_FREQUENCY, clock);
  if (rc == CL_SUCCESS) rc = device_value(api, device, CL_DEVICE_GLOBAL_MEM_SIZE, global);
  if (rc == CL_SUCCESS) rc = device_value(api, device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, max_alloc);
  if (rc == CL_SUCCESS) rc = device_value(api, device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, align_bits);
  if (rc == CL_SUCCESS) rc = device_value(api, device, CL_DEVICE_QUEUE_PROPERTIES, queue_props);
  if (rc != CL_SUCCESS) return rc;
  out.compute_units = units;
  out.clock_mhz = clock;
  out.global_mem_bytes = global;
  out.max_alloc_bytes = max_alloc;
  out.base_addr_align_bytes = align_bits / 8 == 0 ? 1 : align_bits / 8;
  out.profiling = (queue_props & CL_QUEUE_PROFILING_ENABLE) != 0;

  out.uuid_from_driver = false;
  if (out.has_extension("cl_khr_device_uuid") &&
      api.clGetDeviceInfo(device, CL_DEVICE_UUID_KHR, sizeof(out.uuid), out.uuid,
                          nullptr) == CL_SUCCESS) {
    out.uuid_from_driver = true;
  } else {
    hashed_uuid(platform_name + "\n" + out.name + "\n" + std::to_string(index),
                out.uuid);
  }

  out.pci_bus_id.clear();
  cl_device_pci_bus_info_khr pci{};
  if (out.has_extension("cl_khr_pci_bus_info") &&
      api.clGetDeviceInfo(device, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(pci), &pci,
                          nullptr) == CL_SUCCESS) {
    char text[32];
    std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", pci.pci_domain,
                  pci.pci_bus, pci.pci_device, pci.pci_function);
    out.pci_bus_id = text;
  }
  return CL_SUCCESS;
}

std::optional<double> declared_peak_bandwidth(const char* text, uint32_t index,
                                              std::string& error) {
  if (text == nullptr || *text == '\0') return 0.0;
  auto number = [&](std::string_view piece) -> std::optional<double> {
    const std::string s(common::trim(piece));
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end == nullptr || *end != '\0' || !(v > 0.0)) {
      error = "XAL_OPENCL_PEAK_BANDWIDTH_GBPS: '" + s + "' is not a positive number";
      return std::nullopt;
    }
    return v;
  };
  const std::string_view all(text);
  if (all.find('=') == std::string_view::npos) return number(all);
  double found = 0.0;
  for (const std::string& item : common::split(all, ",")) {
    const size_t eq = item.find('=');
    const auto dev = eq == std::string::npos
                         ? std::nullopt
                         : common::parse_uint(common::trim(std::string_view(item).substr(0, eq)));
    if (!dev) {
      error = "XAL_OPENCL_PEAK_BANDWIDTH_GBPS: '" + item + "' is not INDEX=GBPS";
      return std::nullopt;
    }
    const auto v = number(std::string_view(item).substr(eq + 1));
    if (!v) return std::nullopt;
    if (*dev == index) found = *v;
  }
  return found;
}

void fill_properties(const DeviceInfo& info, bool peer_devices,
                     xal_device_properties_t* out) {
  using xal::common::copy_string;
  copy_string(out->name, info.name);
  copy_string(out->vendor, info.vendor);
  if ((info.type & CL_DEVICE_TYPE_GPU) != 0) {
    out->kind = XAL_DEVICE_KIND_GPU;
  } else if ((info.type & CL_DEVICE_TYPE_CPU) != 0) {
    out->kind = XAL_DEVICE_KIND_CPU;
  } else if ((info.type & (CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)) != 0) {
    out->kind = XAL_DEVICE_KIND_ACCELERATOR;
  } else {
    out->kind = XAL_DEVICE_KIND_OTHER;
  }
  std::memcpy(out->uuid, info.uuid, sizeof(out->uuid));
  copy_string(out->pci_bus_id, info.pci_bus_id);
  out->memory_bytes = info.global_mem_bytes;
  out->compute_units = info.compute_units;
  out->core_clock_mhz = info.clock_mhz;
  out->memory_clock_mhz = 0;        // OpenCL does not report it
  out->memory_bus_width_bits = 0;   // nor this
  // OpenCL does not report it: 0 unless XAL_OPENCL_PEAK_BANDWIDTH_GBPS says.
  out->peak_memory_bandwidth_gbps = info.peak_bandwidth_gbps;
  uint64_t caps = XAL_DEVICE_CAP_HOST_MEMORY | XAL_DEVICE_CAP_KERNELS;
  if (info.profiling) caps |= XAL_DEVICE_CAP_EVENT_TIMING;
  if (peer_devices) caps |= XAL_DEVICE_CAP_PEER_COPY;
  out->capabilities = caps;
  out->max_allocation_bytes = info.max_alloc_bytes;
}

}  // namespace xal::opencl
