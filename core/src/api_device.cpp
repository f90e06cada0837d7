// Device listing, properties, synchronize, reset, health.
#include <cstring>

#include "error.hpp"
#include "partition.hpp"
#include "runtime.hpp"
#include "teardown.hpp"
#include "xal_common/strings.hpp"

using namespace xal::core;
using xal::common::copy_string;

extern "C" {

// Number of selected devices. Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_device_count(uint32_t* out_count) {
  return entry("xal_device_count", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!out_count) return null_argument("out_count");
    *out_count = static_cast<uint32_t>(rt->devices.size());
    return XAL_SUCCESS;
  });
}

// The device handle (valid until xal_shutdown). Thread-safe, also against
// xal_shutdown.
XAL_API xal_status_t xal_device_get(uint32_t index, xal_device_t* out_device) {
  return entry("xal_device_get", [&] {
    trace::note_device(index);
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!out_device) return null_argument("out_device");
    if (index >= rt->devices.size())
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("device index ", index, " is past the end (",
                      rt->devices.size(), " devices)"));
    *out_device = to_handle<xal_device_t>(rt->devices[index]);
    return XAL_SUCCESS;
  });
}

// Fills the caller's struct. Thread-safe.
XAL_API xal_status_t xal_device_get_properties(
    xal_device_t device, xal_device_properties_t* out_properties) {
  return entry("xal_device_get_properties", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    XAL_CHECK_STRUCT(out_properties, "out_properties");
    xal_device_properties_t p{};
    p.struct_size = sizeof p;
    p.parent_index = -1;
    const xal_backend_table_t* t = d->hdr.table;
    const xal_status_t s = t->device_get_properties(d->native, &p);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    p.name[sizeof p.name - 1] = 0;
    p.vendor[sizeof p.vendor - 1] = 0;
    p.pci_bus_id[sizeof p.pci_bus_id - 1] = 0;
    copy_string(p.backend, d->backend->name);
    p.index = d->index;
    p.backend_index = d->backend_index;
    if (p.parent_index >= 0) {
      // The backend gives its own index of the parent card: map to global.
      int32_t global = -1;
      if (Runtime* rt = runtime())
        for (DeviceObj* o : rt->devices)
          if (o->backend == d->backend && !o->state->partition &&
              o->backend_index == static_cast<uint32_t>(p.parent_index))
            global = static_cast<int32_t>(o->index);
      p.parent_index = global;
    }
    if (t->memcpy_peer) p.capabilities |= XAL_DEVICE_CAP_PEER_COPY;
    if (t->module_load) p.capabilities |= XAL_DEVICE_CAP_KERNELS;
    if (t->comm_create) p.capabilities |= XAL_DEVICE_CAP_COLLECTIVES;
    if (t->device_get_metrics) p.capabilities |= XAL_DEVICE_CAP_METRICS;
    if (t->device_reset) p.capabilities |= XAL_DEVICE_CAP_RESET;
    p.capabilities |= XAL_DEVICE_CAP_HOST_MEMORY;
    // Interop bits come from the backend (a wrapper passes its target's),
    // and never claim what the table cannot do.
    if (!t->mem_import)
      p.capabilities &= ~(XAL_DEVICE_CAP_MEM_IMPORT | XAL_DEVICE_CAP_HOST_POINTERS);
    if (!t->stream_import) p.capabilities &= ~XAL_DEVICE_CAP_STREAM_IMPORT;
    if (!t->mem_ipc_get || !t->mem_ipc_open) p.capabilities &= ~XAL_DEVICE_CAP_IPC;
    partition_properties(d, &p);
    if (d->backend->flags & XAL_BACKEND_FLAG_SIMULATED)
      p.capabilities |= XAL_DEVICE_CAP_SIMULATED;
    const size_t keep = out_properties->struct_size;
    std::memcpy(out_properties, &p, sizeof p);
    out_properties->struct_size = keep;
    return XAL_SUCCESS;
  });
}

// Waits for all work of the device. Thread-safe.
XAL_API xal_status_t xal_device_synchronize(xal_device_t device) {
  return entry("xal_device_synchronize", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    const xal_status_t s = d->hdr.table->device_synchronize(d->native);
    return s == XAL_SUCCESS ? s : fail_backend(d->backend, d, s);
  });
}

// Resets the device; its streams, events, modules and allocations are
// released, and its communicators aborted first. Not to be raced with other
// calls on the same device.
XAL_API xal_status_t xal_device_reset(xal_device_t device) {
  return entry("xal_device_reset", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    const xal_backend_table_t* t = d->hdr.table;
    if (!t->device_reset)
      return fail(d, XAL_ERROR_NOT_SUPPORTED,
                  cat("backend ", d->backend->name,
                      " does not support device reset"));
    if (d->state->partition)
      return fail(d, XAL_ERROR_NOT_SUPPORTED,
                  cat("device ", d->index, " is a partition: reset its card "
                      "(device ", d->state->partition->parent->index, ")"));
    Runtime* rt = runtime();
    if (rt) abort_device_comms(*rt, d);
    if (rt && d->state->partitioned.load())
      for (DeviceObj* o : rt->devices)
        if (o->state->partition && o->state->partition->parent == d)
          release_device_objects(o);
    release_device_objects(d);
    const xal_status_t s = t->device_reset(d->native);
    return s == XAL_SUCCESS ? s : fail_backend(d->backend, d, s);
  });
}

// Health of the device (OK when the backend has no health entry).
XAL_API xal_status_t xal_device_get_health(xal_device_t device,
                                           xal_device_health_t* out_health) {
  return entry("xal_device_get_health", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    XAL_CHECK_STRUCT(out_health, "out_health");
    xal_device_health_t h{};
    h.struct_size = sizeof h;
    h.state = XAL_HEALTH_OK;
    h.sticky_status = XAL_SUCCESS;
    if (d->hdr.table->device_get_health) {
      const xal_status_t s = d->hdr.table->device_get_health(d->native, &h);
      if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
      h.message[sizeof h.message - 1] = 0;
    }
    const size_t keep = out_health->struct_size;
    std::memcpy(out_health, &h, sizeof h);
    out_health->struct_size = keep;
    return XAL_SUCCESS;
  });
}

}  // extern "C"
