// Backend lifecycle: init (drivers, contexts, devices with sub-devices),
// shutdown and describe.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "entries.h"
#include "errors.h"
#include "status_map.h"
#include "xal_common/strings.hpp"
#include "xalsupport/config.h"

namespace xal::levelzero {
namespace {

using support::config;

xal_status_t unavailable(ze_result_t result, const std::string& what,
                         const std::string& note = "") {
  const StatusMapping mapping = map_status(result);
  char code[32];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(result));
  return report(XAL_ERROR_BACKEND_UNAVAILABLE, result, mapping.name,
                what + " failed: " + mapping.name + " (" + code + ")" + note);
}

// Destroys every context (after the objects in them).
void release_all(xal_backend_s* backend) {
  for (auto& device : backend->devices) release_device_objects(device.get());
  const ZeApi& api = backend->api();
  {
    std::lock_guard lock(backend->host_mutex);
    for (const auto& [pointer, allocation] : backend->host_allocations) {
      (void)api.zeMemFree(allocation.context, pointer);
    }
    backend->host_allocations.clear();
    retry_host_leftovers(backend, nullptr);
    backend->host_leftovers.clear();  // their contexts go below
  }
  for (auto& driver : backend->drivers) {
    for (ze_context_handle_t retired : driver->retired) (void)api.zeContextDestroy(retired);
    driver->retired.clear();
    if (driver->context != nullptr) (void)api.zeContextDestroy(driver->context);
    driver->context = nullptr;
  }
}

// Why a driver is left out: the call that failed and its code.
std::string failure(ze_result_t result, const char* what) {
  char code[32];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(result));
  return std::string(what) + " failed: " + map_status(result).name + " (" + code + ")";
}

// Reads the device's properties; "" or why it failed. From API 1.2 on,
// timerResolution comes as cycles per second (the 1.0 type gives whole ns,
// which truncates 52.083 ns to 52 and gives 0 above 1 GHz).
std::string read_properties(xal_bdevice_s* device) {
  const bool hertz = device->driver->api_version >= ZE_API_VERSION_1_2;
  device->properties.stype =
      hertz ? ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2 : ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
  if (ze_result_t r = device->backend->api().zeDeviceGetProperties(device->handle,
                                                                   &device->properties);
      r != ZE_RESULT_SUCCESS) {
    return failure(r, "zeDeviceGetProperties");
  }
  const auto resolution = static_cast<double>(device->properties.timerResolution);
  device->ns_per_tick = !hertz ? resolution : resolution > 0 ? 1e9 / resolution : 0.0;
  return "";
}

// Fills the rest of the cached description of a device: memory and the
// compute queue group; "" or why it failed.
std::string describe_device(xal_bdevice_s* device) {
  const ZeApi& api = device->backend->api();
  uint32_t count = 0;
  if (api.zeDeviceGetMemoryProperties(device->handle, &count, nullptr) ==
          ZE_RESULT_SUCCESS &&
      count > 0) {
    std::vector<ze_device_memory_properties_t> memories(count);
    for (auto& memory : memories) {
      memory.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    }
    if (api.zeDeviceGetMemoryProperties(device->handle, &count, memories.data()) ==
        ZE_RESULT_SUCCESS) {
      for (uint32_t i = 0; i < count; ++i) {
        device->memory_bytes += memories[i].totalSize;
        device->memory_clock_mhz =
            std::max(device->memory_clock_mhz, memories[i].maxClockRate);
        device->memory_bus_width_bits =
            std::max(device->memory_bus_width_bits, memories[i].maxBusWidth);
      }
    }
  }
  // The first command queue group that runs compute (and copies).
  count = 0;
  if (ze_result_t r = api.zeDeviceGetCommandQueueGroupProperties(
          device->handle, &count, nullptr);
      r != ZE_RESULT_SUCCESS) {
    return failure(r, "zeDeviceGetCommandQueueGroupProperties");
  }
  std::vector<ze_command_queue_group_properties_t> groups(count);
  for (auto& group : groups) {
    group.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
  }
  if (ze_result_t r = api.zeDeviceGetCommandQueueGroupProperties(
          device->handle, &count, groups.data());
      r != ZE_RESULT_SUCCESS) {
    return failure(r, "zeDeviceGetCommandQueueGroupProperties");
  }
  for (uint32_t i = 0; i < count; ++i) {
    if (groups[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
      device->compute_ordinal = i;
      return "";
    }
  }
  return "a device has no compute queue group";
}

// The GPU devices of `driver` (its sub-devices with `sub_devices`) into
// `out`; "" or why the driver cannot be used. Devices of other types (an
// NPU's, when the loader lists one despite ZE_INIT_FLAG_GPU_ONLY) are left
// out.
std::string find_devices(xal_backend_s* backend, DriverState* driver, bool sub_devices,
                         std::vector<std::unique_ptr<xal_bdevice_s>>* out) {
  const ZeApi& api = backend->api();
  uint32_t count = 0;
  if (ze_result_t r = api.zeDeviceGet(driver->handle, &count, nullptr);
      r != ZE_RESULT_SUCCESS) {
    return failure(r, "zeDeviceGet");
  }
  std::vector<ze_device_handle_t> roots(count);
  if (ze_result_t r = api.zeDeviceGet(driver->handle, &count, roots.data());
      r != ZE_RESULT_SUCCESS) {
    return failure(r, "zeDeviceGet");
  }
  for (ze_device_handle_t root : roots) {
    std::vector<ze_device_handle_t> handles{root};
    uint32_t subs = 0;
    if (sub_devices &&
        api.zeDeviceGetSubDevices(root, &subs, nullptr) == ZE_RESULT_SUCCESS &&
        subs > 0) {
      handles.resize(subs);
      if (ze_result_t r = api.zeDeviceGetSubDevices(root, &subs, handles.data());
          r != ZE_RESULT_SUCCESS) {
        return failure(r, "zeDeviceGetSubDevices");
      }
    }
    for (ze_device_handle_t handle : handles) {
      auto device = std::make_unique<xal_bdevice_s>();
      device->backend = backend;
      device->driver = driver;
      device->handle = handle;
      device->root = root;
      if (std::string why = read_properties(device.get()); !why.empty()) return why;
      if (device->properties.type != ZE_DEVICE_TYPE_GPU) break;  // nor its tiles
      if (std::string why = describe_device(device.get()); !why.empty()) return why;
      out->push_back(std::move(device));
    }
  }
  return "";
}

// Adds a driver with its context and GPU devices; "" or why it is left out
// (nothing of it is kept then).
std::string add_driver(xal_backend_s* backend, ze_driver_handle_t handle,
                       bool sub_devices) {
  const ZeApi& api = backend->api();
  auto driver = std::make_unique<DriverState>();
  driver->handle = handle;
  ze_api_version_t version{};
  if (api.zeDriverGetApiVersion(handle, &version) == ZE_RESULT_SUCCESS) {
    driver->api_version = static_cast<uint32_t>(version);
  }
  ze_context_desc_t desc{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
  if (ze_result_t r = api.zeContextCreate(handle, &desc, &driver->context);
      r != ZE_RESULT_SUCCESS) {
    return failure(r, "zeContextCreate");
  }
  std::vector<std::unique_ptr<xal_bdevice_s>> devices;
  std::string why = find_devices(backend, driver.get(), sub_devices, &devices);
  if (why.empty() && devices.empty()) why = "no GPU devices";
  if (!why.empty()) {
    (void)api.zeContextDestroy(driver->context);
    return why;
  }
  for (auto& device : devices) {
    device->index = static_cast<uint32_t>(backend->devices.size());
    driver->devices.push_back(device.get());
    backend->devices.push_back(std::move(device));
  }
  backend->drivers.push_back(std::move(driver));
  return "";
}

}  // namespace

xal_status_t init(const xal_backend_init_args_t* args,
                          xal_backend_t** out_backend) {
  return guarded("levelzero init", [&]() -> xal_status_t {
    if (args == nullptr || out_backend == nullptr) {
      return report(XAL_ERROR_INVALID_ARGUMENT, 0, nullptr,
                    "levelzero init: null argument");
    }
    set_services(args->services);
    auto backend = std::make_unique<xal_backend_s>();
    backend->services = args->services;
    std::string reason;
    if (!backend->library.load(config(args->services, "XAL_LEVELZERO_LIBRARY"),
                               &reason)) {
      return report(XAL_ERROR_BACKEND_UNAVAILABLE, 0, nullptr, reason);
    }
    // Device handles double as Sysman handles when this is set before zeInit.
    setenv("ZES_ENABLE_SYSMAN", "1", 0);
    const ZeApi& api = backend->api();
    // GPU drivers only: an NPU (VPU) driver has none of what xal needs.
    if (ze_result_t r = api.zeInit(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS) {
      return unavailable(r, "zeInit",
                         " in " + backend->library.path() +
                             " (no Level Zero driver installed?)");
    }
    uint32_t driver_count = 0;
    if (ze_result_t r = api.zeDriverGet(&driver_count, nullptr);
        r != ZE_RESULT_SUCCESS) {
      return unavailable(r, "zeDriverGet");
    }
    std::vector<ze_driver_handle_t> drivers(driver_count);
    if (driver_count > 0) {
      if (ze_result_t r = api.zeDriverGet(&driver_count, drivers.data());
          r != ZE_RESULT_SUCCESS) {
        return unavailable(r, "zeDriverGet");
      }
    }
    const bool sub_devices = config(args->services, "XAL_LEVELZERO_SUBDEVICES") == "1";
    // A driver that fails is left out (and named in describe's note); the
    // others still serve.
    for (uint32_t i = 0; i < driver_count; ++i) {
      if (std::string why = add_driver(backend.get(), drivers[i], sub_devices); !why.empty()) {
        if (!backend->skipped.empty()) backend->skipped += "; ";
        backend->skipped += "driver " + std::to_string(i) + " skipped: " + why;
      }
    }
    if (backend->devices.empty()) {
      release_all(backend.get());
      return report(XAL_ERROR_BACKEND_UNAVAILABLE, 0, nullptr,
                    "the Level Zero loader " + backend->library.path() +
                        " reports no devices (" + std::to_string(driver_count) +
                        " drivers" + (backend->skipped.empty() ? "" : "; ") +
                        backend->skipped + ")");
    }
    for (auto& device : backend->devices) sysman_start(device.get());
    const DriverState& first = *backend->drivers.front();
    if (first.api_version != 0) {
      backend->api_version = "Level Zero " +
                             std::to_string(ZE_MAJOR_VERSION(first.api_version)) + "." +
                             std::to_string(ZE_MINOR_VERSION(first.api_version));
    }
    ze_driver_properties_t driver_props{ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    if (api.zeDriverGetProperties(first.handle, &driver_props) == ZE_RESULT_SUCCESS) {
      backend->api_version += ", driver " + std::to_string(driver_props.driverVersion);
    }
    const std::string timeout = config(args->services, "XAL_LEVELZERO_SYNC_TIMEOUT_MS");
    if (auto ms = common::parse_uint(timeout); ms && *ms > 0) {
      // Saturated: more than UINT64_MAX ns (585 years) is forever.
      constexpr uint64_t kMaxMs = UINT64_MAX / 1000000ull;
      backend->sync_timeout_ns = *ms > kMaxMs ? UINT64_MAX : *ms * 1000000ull;
    }
    *out_backend = backend.release();
    return XAL_SUCCESS;
  });
}

xal_status_t shutdown(xal_backend_t* backend) {
  return guarded("levelzero shutdown", [&]() -> xal_status_t {
    std::unique_ptr<xal_backend_s> owned(backend);
    if (owned != nullptr) release_all(owned.get());
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend,
                              xal_backend_describe_t* out) {
  return guarded("levelzero describe", [&]() -> xal_status_t {
    common::copy_string(out->name, "levelzero");
    common::copy_string(out->driver_version, backend->api_version);
    out->flags = 0;
    std::string note = "loader " + backend->library.path() + "; " +
                       std::to_string(backend->drivers.size()) + " driver(s)";
    if (backend->library.simulated()) {
      out->flags |= XAL_BACKEND_FLAG_SIMULATED;
      note = "simulated driver (" + backend->library.simulated_note() + "), " + note;
    }
    note += "; collectives through the core (oneCCL has no C API)";
    // Drivers left out at init next (a note is 255 characters).
    if (!backend->skipped.empty()) note = backend->skipped + "; " + note;
    // What this backend has been run on, first so that it is never cut.
    note = std::string(support_note) + "; " + note;
    common::copy_string(out->note, note);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::levelzero
