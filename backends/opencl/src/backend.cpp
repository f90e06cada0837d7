// Backend instances (init/shutdown/describe) and device queries.
#include "backend.h"
#include "entries.h"
#include "xal_common/strings.hpp"
#include "xalsupport/config.h"

#include <cstdlib>
#include <string>

namespace xal::opencl {
namespace {

constexpr const char* kDefaultLibrary = "libOpenCL.so.1";

using support::config_value;

bool type_selected(cl_device_type type, const std::string& filter) {
  if (filter.empty() || filter == "all") return true;
  if (filter == "gpu") return (type & CL_DEVICE_TYPE_GPU) != 0;
  if (filter == "cpu") return (type & CL_DEVICE_TYPE_CPU) != 0;
  if (filter == "accelerator") {
    return (type & (CL_DEVICE_TYPE_ACCELERATOR | CL_DEVICE_TYPE_CUSTOM)) != 0;
  }
  return false;
}

// Frees everything of an instance (also a partly initialised one).
void destroy(xal_backend_s& b) {
  const ClApi& api = b.api();
  for (auto& m : b.modules.take_all()) release_module(*m);
  for (auto& s : b.streams.take_all()) release_stream(*s);
  for (auto& e : b.events.take_all()) release_event(*e);
  if (b.shared) b.shared->releases.release_all(api);
  {
    std::lock_guard lock(b.host_mutex);
    for (auto& [ptr, h] : b.host_allocations) {
      if (h.mem != nullptr) {
        api.clEnqueueUnmapMemObject(h.queue, h.mem, ptr, 0, nullptr, nullptr);
        api.clFinish(h.queue);
        api.clReleaseMemObject(h.mem);
      } else {
        std::free(h.plain);
      }
    }
    b.host_allocations.clear();
  }
  for (auto& d : b.devices) {
    if (d->memory) {
      for (cl_mem mem : d->memory->take_all()) api.clReleaseMemObject(mem);
    }
    for (auto& [name, k] : d->builtin_kernels) api.clReleaseKernel(k);
    d->builtin_kernels.clear();
    if (d->builtin_program != nullptr) api.clReleaseProgram(d->builtin_program);
    if (d->internal_queue != nullptr) api.clReleaseCommandQueue(d->internal_queue);
  }
  b.devices.clear();
  for (Platform& p : b.platforms) {
    if (p.context != nullptr) api.clReleaseContext(p.context);
  }
  b.platforms.clear();
}

struct Destroyer {
  void operator()(xal_backend_s* b) const {
    destroy(*b);
    std::default_delete<xal_backend_s>()(b);
  }
};
using BackendPtr = std::unique_ptr<xal_backend_s, Destroyer>;

// Creates the context of platform `p` over its selected devices and adds
// the devices to the instance.
xal_status_t add_platform(xal_backend_s& b, cl_platform_id id,
                          const std::string& type_filter) {
  const ClApi& api = b.api();
  const xal_backend_services_t* s = b.services;
  Platform p;
  p.id = id;
  p.name = platform_string(api, id, CL_PLATFORM_NAME);
  p.vendor = platform_string(api, id, CL_PLATFORM_VENDOR);
  p.version = platform_string(api, id, CL_PLATFORM_VERSION);

  std::vector<cl_device_id> all;
  if (list_devices(api, id, all) != CL_SUCCESS) return XAL_SUCCESS;  // none
  std::vector<cl_device_id> ids;
  std::vector<DeviceInfo> infos;
  for (size_t i = 0; i < all.size(); ++i) {
    DeviceInfo info;
    cl_int rc = query_device(api, all[i], p.name, static_cast<uint32_t>(i), info);
    if (rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_BACKEND_UNAVAILABLE, rc, "clGetDeviceInfo",
                       "querying a device of platform '" + p.name + "'");
    }
    if (!type_selected(info.type, type_filter)) continue;
    ids.push_back(all[i]);
    infos.push_back(std::move(info));
  }
  if (ids.empty()) return XAL_SUCCESS;

  const cl_context_properties props[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(id), 0};
  cl_int rc = CL_SUCCESS;
  p.context = api.clCreateContext(props, static_cast<cl_uint>(ids.size()),
                                  ids.data(), nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) {
    return report_cl(s, XAL_ERROR_BACKEND_UNAVAILABLE, rc, "clCreateContext",
                     "platform '" + p.name + "'");
  }
  p.device_count = ids.size();
  b.platforms.push_back(std::move(p));
  const Platform& added = b.platforms.back();

  for (size_t i = 0; i < ids.size(); ++i) {
    auto dev = std::make_unique<xal_bdevice_s>();
    dev->backend = &b;
    dev->index = static_cast<uint32_t>(b.devices.size());
    dev->platform = b.platforms.size() - 1;
    dev->id = ids[i];
    dev->context = added.context;
    dev->info = std::move(infos[i]);
    std::string error;
    const auto peak = declared_peak_bandwidth(config_value(s, "XAL_OPENCL_PEAK_BANDWIDTH_GBPS"),
                                              dev->index, error);
    if (!peak) return report(s, XAL_ERROR_BACKEND_UNAVAILABLE, error);
    dev->info.peak_bandwidth_gbps = *peak;
    const uint64_t base = static_cast<uint64_t>(dev->index + 1) << kAddressSpaceShift;
    dev->memory = std::make_unique<AddressSpace>(base, uint64_t{1} << kAddressSpaceShift);
    dev->internal_queue = api.clCreateCommandQueue(added.context, ids[i], 0, &rc);
    if (rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_BACKEND_UNAVAILABLE, rc, "clCreateCommandQueue",
                       "device '" + dev->info.name + "'");
    }
    b.devices.push_back(std::move(dev));
  }
  return XAL_SUCCESS;
}

}  // namespace

xal_status_t init(const xal_backend_init_args_t* args,
                          xal_backend_t** out_backend) {
  const xal_backend_services_t* s = args != nullptr ? args->services : nullptr;
  return guarded(Entry{s}, "opencl init", [&]() -> xal_status_t {
    if (args == nullptr || out_backend == nullptr) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT, "opencl init: NULL argument");
    }
    BackendPtr b(new xal_backend_s());
    b->services = s;
    const char* lib = config_value(s, "XAL_OPENCL_LIBRARY");
    const std::string path = (lib != nullptr && *lib != '\0') ? lib : kDefaultLibrary;
    std::string error;
    if (!b->library.load(path, error)) {
      return report(s, XAL_ERROR_BACKEND_UNAVAILABLE, error);
    }
    b->shared = std::make_shared<CallbackShared>(b->api());
    std::vector<cl_platform_id> platforms;
    cl_int rc = list_platforms(b->api(), platforms);
    if (rc == CL_PLATFORM_NOT_FOUND_KHR || (rc == CL_SUCCESS && platforms.empty())) {
      return report_cl(s, XAL_ERROR_BACKEND_UNAVAILABLE, rc, "clGetPlatformIDs",
                       "no OpenCL platform is installed (no ICD found by " + path + ")");
    }
    if (rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_BACKEND_UNAVAILABLE, rc, "clGetPlatformIDs");
    }
    const char* pf = config_value(s, "XAL_OPENCL_PLATFORM");
    const std::string platform_filter = pf != nullptr ? common::to_lower(pf) : "";
    const char* tf = config_value(s, "XAL_OPENCL_DEVICE_TYPE");
    const std::string type_filter = tf != nullptr ? common::to_lower(tf) : "";
    if (!type_filter.empty() && type_filter != "all" && type_filter != "gpu" &&
        type_filter != "cpu" && type_filter != "accelerator") {
      return report(s, XAL_ERROR_BACKEND_UNAVAILABLE,
                    "XAL_OPENCL_DEVICE_TYPE='" + type_filter +
                        "' is not one of all, gpu, cpu, accelerator");
    }
    std::string seen;
    for (cl_platform_id id : platforms) {
      const std::string name = platform_string(b->api(), id, CL_PLATFORM_NAME);
      seen += (seen.empty() ? "" : ", ") + ("'" + name + "'");
      const std::string vendor = platform_string(b->api(), id, CL_PLATFORM_VENDOR);
      if (!platform_filter.empty() &&
          common::to_lower(name).find(platform_filter) == std::string::npos &&
          common::to_lower(vendor).find(platform_filter) == std::string::npos) {
        continue;
      }
      const xal_status_t st = add_platform(*b, id, type_filter);
      if (st != XAL_SUCCESS) return st;
    }
    if (b->devices.empty()) {
      return report(s, XAL_ERROR_BACKEND_UNAVAILABLE,
                    "no OpenCL device matches (platforms: " + seen +
                        (platform_filter.empty() ? "" : "; XAL_OPENCL_PLATFORM='" + platform_filter + "'") +
                        (type_filter.empty() ? "" : "; XAL_OPENCL_DEVICE_TYPE='" + type_filter + "'") + ")");
    }
    *out_backend = b.release();
    return XAL_SUCCESS;
  });
}

xal_status_t shutdown(xal_backend_t* backend) {
  const xal_backend_services_t* s = backend != nullptr ? backend->services : nullptr;
  return guarded(Entry{s}, "opencl shutdown", [&]() -> xal_status_t {
    if (backend == nullptr) return XAL_ERROR_INVALID_HANDLE;
    BackendPtr owned(backend);
    return XAL_SUCCESS;
  });
}

xal_status_t describe(xal_backend_t* backend, xal_backend_describe_t* out) {
  return guarded(Entry{backend->services}, "opencl describe", [&]() -> xal_status_t {
    common::copy_string(out->name, "opencl");
    const std::string driver =
        backend->devices.empty() ? "" : backend->devices.front()->info.driver_version;
    common::copy_string(out->driver_version, driver);
    out->flags = 0;  // real drivers only
    // What this backend has been run on, first so that it is never cut.
    std::string note = support_note;
    for (const Platform& p : backend->platforms) {
      note += "; " + p.name + " (" + p.version + ")";
    }
    note += " via " + backend->library.path();
    common::copy_string(out->note, note);
    return XAL_SUCCESS;
  });
}

xal_status_t device_count(xal_backend_t* backend, uint32_t* out_count) {
  *out_count = static_cast<uint32_t>(backend->devices.size());
  return XAL_SUCCESS;
}

xal_status_t device_get(xal_backend_t* backend, uint32_t index, xal_bdevice_t** out) {
  return guarded(Entry{backend->services}, "device_get", [&]() -> xal_status_t {
    if (index >= backend->devices.size()) {
      return report(backend->services, XAL_ERROR_INVALID_ARGUMENT,
                    "device index " + std::to_string(index) + " is out of range (" +
                        std::to_string(backend->devices.size()) + " OpenCL devices)");
    }
    *out = backend->devices[index].get();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_properties(xal_bdevice_t* device, xal_device_properties_t* out) {
  return guarded(Entry{device->backend->services}, "device_get_properties", [&] {
    const Platform& p = device->backend->platforms[device->platform];
    fill_properties(device->info, p.device_count > 1, out);
    // Interop, where the loader has the queries (interop.cpp); no IPC.
    const ClApi& api = device->backend->api();
    if (api.clGetMemObjectInfo != nullptr && api.clRetainMemObject != nullptr) {
      out->capabilities |= XAL_DEVICE_CAP_MEM_IMPORT;
    }
    if (api.clGetCommandQueueInfo != nullptr) out->capabilities |= XAL_DEVICE_CAP_STREAM_IMPORT;
    return XAL_SUCCESS;
  });
}

}  // namespace xal::opencl
