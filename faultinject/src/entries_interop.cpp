// Fault wrappers of the ABI 1.1 interop entries: imported memory and
// streams, IPC handles. Each is an injection point named after its entry;
// an entry the target lacks gives NOT_SUPPORTED.
#include "backend.hpp"

namespace xal::fault {
namespace {

xal_status_t target_lacks(FaultBackend* b, const char* entry) {
  return b->report(XAL_ERROR_NOT_SUPPORTED,
                   std::string("fault: the wrapped backend has no ") + entry);
}

xal_status_t fault_mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes,
                              uint32_t flags, xal_devptr_t* out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_import", [&] {
    if (!b->t.mem_import) return target_lacks(b, "mem_import");
    const auto s = b->before(Op::mem_import, d, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_import(d->target, native, bytes, flags, out);
  });
}

xal_status_t fault_mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_import_release", [&] {
    if (!b->t.mem_import_release) return target_lacks(b, "mem_import_release");
    const auto s = b->before(Op::mem_import_release, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_import_release(d->target, ptr);
  });
}

// `native` is the wrapped backend's stream (what a framework holds), or one
// of this backend's stream wrappers (what xal_handle_get_native gives on a
// fault device), which is unwrapped first.
xal_status_t fault_stream_import(xal_bdevice_t* device, uint64_t native, uint32_t flags,
                                 xal_bstream_t** out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "stream_import", [&] {
    if (!b->t.stream_import) return target_lacks(b, "stream_import");
    const auto s = b->before(Op::stream_import, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    uint64_t target_native = native;
    b->streams.visit(reinterpret_cast<const void*>(static_cast<uintptr_t>(native)),
                     [&](FaultStream& w) {
                       target_native = reinterpret_cast<uintptr_t>(w.target);
                     });
    auto w = std::make_unique<FaultStream>();
    w->device = d;
    const auto c = b->t.stream_import(d->target, target_native, flags, &w->target);
    if (c != XAL_SUCCESS) return c;
    *out = reinterpret_cast<xal_bstream_t*>(b->streams.add(std::move(w)));
    return XAL_SUCCESS;
  });
}

xal_status_t fault_mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes,
                               uint8_t* out_vendor) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_ipc_get", [&] {
    if (!b->t.mem_ipc_get) return target_lacks(b, "mem_ipc_get");
    const auto s = b->before(Op::mem_ipc_get, d, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_ipc_get(d->target, ptr, bytes, out_vendor);
  });
}

xal_status_t fault_mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                                int32_t owner_pid, xal_devptr_t* out) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_ipc_open", [&] {
    if (!b->t.mem_ipc_open) return target_lacks(b, "mem_ipc_open");
    const auto s = b->before(Op::mem_ipc_open, d, nullptr, bytes, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_ipc_open(d->target, vendor, bytes, owner_pid, out);
  });
}

xal_status_t fault_mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr) {
  FaultDevice* d = as_fault(device);
  FaultBackend* b = d->backend;
  return guarded(FaultEntry{b}, "mem_ipc_close", [&] {
    if (!b->t.mem_ipc_close) return target_lacks(b, "mem_ipc_close");
    const auto s = b->before(Op::mem_ipc_close, d, nullptr, std::nullopt, 0, nullptr);
    if (s != XAL_SUCCESS) return s;
    return b->t.mem_ipc_close(d->target, ptr);
  });
}

}  // namespace

void fill_interop_entries(xal_backend_table_t& t) {
  t.mem_import = fault_mem_import;
  t.mem_import_release = fault_mem_import_release;
  t.stream_import = fault_stream_import;
  t.mem_ipc_get = fault_mem_ipc_get;
  t.mem_ipc_open = fault_mem_ipc_open;
  t.mem_ipc_close = fault_mem_ipc_close;
}

}  // namespace xal::fault
