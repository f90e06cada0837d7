// ABI 1.1 interop: buffers and queues the caller made with OpenCL in the
// device's context. An imported cl_mem is retained and placed at a
// synthetic address like xal's own buffers (address_map.h), so copies, memset
// and kernel arguments resolve it; releasing the import releases that
// reference only. An imported queue is retained and released on destroy;
// the caller's reference keeps it alive. OpenCL has no IPC.
#include "backend.h"
#include "entries.h"
#include "xal_common/strings.hpp"
#include "xal_opencl.h"

#include <cinttypes>
#include <cstdio>

namespace xal::opencl {
namespace {

using common::hex;

template <typename T>
cl_int mem_info(const ClApi& api, cl_mem mem, cl_mem_info what, T& out) {
  return api.clGetMemObjectInfo(mem, what, sizeof(T), &out, nullptr);
}

template <typename T>
cl_int queue_info(const ClApi& api, cl_command_queue queue, cl_command_queue_info what,
                  T& out) {
  return api.clGetCommandQueueInfo(queue, what, sizeof(T), &out, nullptr);
}

// Where a caller finds the context its objects must belong to.
constexpr const char* kContextHint =
    " (the device's own context: xal_opencl_native_v1 in xal_opencl.h gives it)";

xal_status_t device_objects(xal_bdevice_t* device, void** out_context, void** out_device_id) {
  if (device == nullptr) return XAL_ERROR_INVALID_HANDLE;
  if (out_context != nullptr) *out_context = device->context;
  if (out_device_id != nullptr) *out_device_id = device->id;
  return XAL_SUCCESS;
}

xal_status_t stream_queue(xal_bstream_t* stream, void** out_queue) {
  if (stream == nullptr) return XAL_ERROR_INVALID_HANDLE;
  if (out_queue == nullptr) {
    return report(stream->device->backend->services, XAL_ERROR_INVALID_ARGUMENT,
                  "stream_queue: out_queue is NULL");
  }
  *out_queue = stream->queue;
  return XAL_SUCCESS;
}

const xal_opencl_native_v1_t kNativeExtension = {sizeof(xal_opencl_native_v1_t),
                                                 device_objects, stream_queue};

}  // namespace

const void* native_extension() { return &kNativeExtension; }

xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes, uint32_t flags,
                        xal_devptr_t* out_ptr) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "mem_import", [&]() -> xal_status_t {
    const ClApi& api = device->backend->api();
    if ((flags & XAL_MEM_IMPORT_HOST) != 0) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "mem_import: OpenCL devices import cl_mem buffers only");
    }
    if (device->memory->contains_address(native)) {
      // An address of this device, from the backend's own mem_alloc (what
      // a program driving the table directly holds): used as it is, never
      // handed to the OpenCL library as a cl_mem.
      if (!device->memory->resolve(native, bytes)) {
        return report(s, XAL_ERROR_INVALID_ARGUMENT,
                      "mem_import: [" + hex(native) + ", +" + std::to_string(bytes) +
                          ") is not inside a live allocation of '" + device->info.name + "'");
      }
      *out_ptr = native;
      return XAL_SUCCESS;
    }
    if (api.clGetMemObjectInfo == nullptr || api.clRetainMemObject == nullptr) {
      return report(s, XAL_ERROR_NOT_SUPPORTED,
                    "mem_import: the OpenCL library lacks clGetMemObjectInfo");
    }
    const auto mem = reinterpret_cast<cl_mem>(native);
    const std::string what = "mem_import: " + hex(native);
    cl_mem_object_type type = 0;
    if (const cl_int rc = mem_info(api, mem, CL_MEM_TYPE, type); rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_INVALID_ARGUMENT, rc, what, "not a live cl_mem");
    }
    if (type != CL_MEM_OBJECT_BUFFER) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT, what + " is an image or pipe, not a buffer");
    }
    cl_context context = nullptr;
    size_t size = 0;
    cl_int rc = mem_info(api, mem, CL_MEM_CONTEXT, context);
    if (rc == CL_SUCCESS) rc = mem_info(api, mem, CL_MEM_SIZE, size);
    if (rc != CL_SUCCESS) return report_cl(s, XAL_ERROR_INVALID_ARGUMENT, rc, what);
    if (context != device->context) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    what + " is a buffer of another context than the one of device '" +
                        device->info.name + "'" + kContextHint);
    }
    if (bytes > size) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    what + ": " + std::to_string(bytes) + " bytes asked of a buffer of " +
                        std::to_string(size));
    }
    if (rc = api.clRetainMemObject(mem); rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_INVALID_ARGUMENT, rc, "clRetainMemObject", what);
    }
    const std::optional<xal_devptr_t> ptr = device->memory->insert_imported(mem, bytes);
    if (!ptr) {
      api.clReleaseMemObject(mem);
      return report(s, XAL_ERROR_OUT_OF_MEMORY,
                    what + ": the device address range of '" + device->info.name +
                        "' is exhausted");
    }
    *out_ptr = *ptr;
    return XAL_SUCCESS;
  });
}

// Forgets the import whatever clReleaseMemObject says (xal_backend.h); a
// refusal is reported.
xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "mem_import_release", [&]() -> xal_status_t {
    // An import of the device's own memory holds nothing of its own.
    if (device->memory->resolve(ptr, 1) && !device->memory->imported_at(ptr)) {
      return XAL_SUCCESS;
    }
    const cl_mem mem = device->memory->erase(ptr);
    if (mem == nullptr) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    "mem_import_release: " + hex(ptr) + " is not an import of '" +
                        device->info.name + "'");
    }
    xal_backend_s& b = *device->backend;
    // Held back while a host-function gate is unset, as xal's own buffers.
    const cl_int rc = b.releases().release(b.api(), mem);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clReleaseMemObject");
  });
}

xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t /*flags*/,
                           xal_bstream_t** out_stream) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "stream_import", [&]() -> xal_status_t {
    const ClApi& api = device->backend->api();
    if (api.clGetCommandQueueInfo == nullptr) {
      return report(s, XAL_ERROR_NOT_SUPPORTED,
                    "stream_import: the OpenCL library lacks clGetCommandQueueInfo");
    }
    auto queue = reinterpret_cast<cl_command_queue>(native);
    const std::string what = "stream_import: " + hex(native);
    // One of this backend's own streams (what xal_handle_get_native or the
    // table gives a program): its queue, never the object itself, goes to
    // the OpenCL library.
    device->backend->streams.visit(reinterpret_cast<const void*>(native),
                                   [&](xal_bstream_s& own) { queue = own.queue; });
    cl_context context = nullptr;
    if (const cl_int rc = queue_info(api, queue, CL_QUEUE_CONTEXT, context); rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_INVALID_ARGUMENT, rc, what, "not a live cl_command_queue");
    }
    cl_device_id id = nullptr;
    cl_command_queue_properties properties = 0;
    cl_int rc = queue_info(api, queue, CL_QUEUE_DEVICE, id);
    if (rc == CL_SUCCESS) rc = queue_info(api, queue, CL_QUEUE_PROPERTIES, properties);
    if (rc != CL_SUCCESS) return report_cl(s, XAL_ERROR_INVALID_ARGUMENT, rc, what);
    if (context != device->context) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    what + " is a queue of another context than the one of device '" +
                        device->info.name + "'" + kContextHint);
    }
    if (id != device->id) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    what + " is a queue of another device of the context, not of '" +
                        device->info.name + "'");
    }
    if ((properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE) != 0) {
      return report(s, XAL_ERROR_INVALID_ARGUMENT,
                    what + " is an out-of-order queue: xal's streams run in order");
    }
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    stream->log = std::make_shared<CommandLog>(api);
    if (rc = api.clRetainCommandQueue(queue); rc != CL_SUCCESS) {
      return report_cl(s, XAL_ERROR_INVALID_ARGUMENT, rc, "clRetainCommandQueue", what);
    }
    stream->queue = queue;  // released by release_stream, as xal's own
    *out_stream = device->backend->streams.add(std::move(stream));
    return XAL_SUCCESS;
  });
}

}  // namespace xal::opencl
