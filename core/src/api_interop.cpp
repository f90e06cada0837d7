// ABI 1.1 interop: memory and streams a framework owns (xal_mem_import,
// xal_stream_import) and device memory shared between the processes of one
// host (IPC handles). Host registration is in host_memory.cpp.
#include <signal.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "error.hpp"
#include "partition.hpp"
#include "runtime.hpp"
#include "xal_common/strings.hpp"

using namespace xal::core;
using xal::common::copy_string;

namespace {

// The core's part of an xal_ipc_handle_t; the backend's vendor bytes
// (XAL_IPC_VENDOR_BYTES) follow it.
struct IpcHeader {
  char magic[8];        // "XALIPC1"
  uint32_t layout;      // 1
  int32_t owner_pid;    // the exporting process
  char backend[16];     // its backend's short name
  uint8_t host[16];     // the exporting host's boot id
  uint64_t bytes;       // size of the allocation
  uint64_t reserved;
};
static_assert(sizeof(IpcHeader) + XAL_IPC_VENDOR_BYTES == XAL_IPC_HANDLE_SIZE);
constexpr char kIpcMagic[8] = "XALIPC1";

// This host's identity: the kernel's boot id (the same in every process and
// network namespace of one running kernel, which is what shares memory).
const std::array<uint8_t, 16>& host_id() {
  static const std::array<uint8_t, 16> id = [] {
    std::array<uint8_t, 16> out{};
    std::ifstream in("/proc/sys/kernel/random/boot_id");
    std::string text;
    std::getline(in, text);
    size_t n = 0;
    for (size_t i = 0; i + 1 < text.size() && n < out.size(); ++i) {
      if (!std::isxdigit(static_cast<unsigned char>(text[i])) ||
          !std::isxdigit(static_cast<unsigned char>(text[i + 1])))
        continue;
      out[n++] = static_cast<uint8_t>(std::stoi(text.substr(i, 2), nullptr, 16));
      ++i;
    }
    return out;
  }();
  return id;
}

// NOT_SUPPORTED naming the device and what it lacks.
xal_status_t unsupported(DeviceObj* d, const char* what) {
  return fail(d, XAL_ERROR_NOT_SUPPORTED,
              cat("backend ", d->backend->name, " (device ", d->index, ") does not support ",
                  what));
}

// Adds a range xal does not own to the device's registry. INVALID_ARGUMENT
// when it overlaps a live allocation or import.
xal_status_t add_foreign(DeviceObj* d, xal_devptr_t ptr, uint64_t bytes, bool ipc) {
  DeviceState& st = *d->state;
  std::lock_guard lock(st.foreign_mu);
  // The range overlaps a live one when the range holding (or closest below)
  // its last byte ends after its start.
  Registry::Range near{};
  if (st.registry.contains(ptr + bytes - 1, 1, &near) ||
      (near.size != 0 && near.base + near.size > ptr))
    return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                cat("range [", hex(ptr), ", +", bytes,
                    ") overlaps a live allocation or import of device ", d->index));
  st.registry.add(ptr, bytes);
  st.foreign[ptr] = DeviceState::Foreign{bytes, ipc};
  return XAL_SUCCESS;
}

}  // namespace

extern "C" {

// Wraps caller-owned memory. Thread-safe.
XAL_API xal_status_t xal_mem_import(xal_device_t device, uint64_t native, size_t bytes,
                                    uint32_t flags, xal_devptr_t* out_ptr) {
  return entry("xal_mem_import", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_ptr) return null_argument("out_ptr");
    if (native == 0) return null_argument("native");
    if (bytes == 0)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT, "cannot import 0 bytes (bytes must be > 0)");
    if (flags & ~XAL_MEM_IMPORT_HOST)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT, cat("unknown import flags ", hex(flags)));
    if (native + bytes < native)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("range [", hex(native), ", +", bytes, ") wraps around"));
    if (!d->hdr.table->mem_import) return unsupported(d, "importing memory (xal_mem_import)");
    if (xal_status_t r = refuse_if_partitioned(d, "import memory"); r) return r;
    xal_devptr_t p = 0;
    const xal_status_t s = d->hdr.table->mem_import(d->native, native, bytes, flags, &p);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    if (const xal_status_t a = add_foreign(d, p, bytes, false); a != XAL_SUCCESS) {
      d->hdr.table->mem_import_release(d->native, p);
      return a;
    }
    *out_ptr = p;
    return XAL_SUCCESS;
  });
}

// Adopts a native stream. Thread-safe.
XAL_API xal_status_t xal_stream_import(xal_device_t device, uint64_t native, uint32_t flags,
                                       xal_stream_t* out_stream) {
  return entry("xal_stream_import", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_stream) return null_argument("out_stream");
    if (native == 0) return null_argument("native");
    if (flags != 0)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT, cat("unknown stream import flags ", hex(flags)));
    if (!d->hdr.table->stream_import) return unsupported(d, "importing streams (xal_stream_import)");
    if (xal_status_t r = refuse_if_partitioned(d, "import streams"); r) return r;
    xal_bstream_t* bs = nullptr;
    const xal_status_t s = d->hdr.table->stream_import(d->native, native, flags, &bs);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    *out_stream = publish_stream(d, bs);
    return XAL_SUCCESS;
  });
}

// Exports an allocation for another process. Thread-safe.
XAL_API xal_status_t xal_mem_get_ipc_handle(xal_device_t device, xal_devptr_t ptr,
                                            xal_ipc_handle_t* out_handle) {
  return entry("xal_mem_get_ipc_handle", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!out_handle) return null_argument("out_handle");
    if (!d->hdr.table->mem_ipc_get) return unsupported(d, "IPC handles");
    {
      std::lock_guard lock(d->state->foreign_mu);
      if (d->state->foreign.count(ptr))
        return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                    cat("pointer ", hex(ptr), " of device ", d->index,
                        " is imported or opened memory: only memory xal_mem_alloc made "
                        "can be exported"));
    }
    const auto bytes = d->state->registry.find(ptr);
    if (!bytes)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("pointer ", hex(ptr), " is not the start of a live allocation of device ",
                      d->index));
    xal_ipc_handle_t h{};
    IpcHeader head{};
    std::memcpy(head.magic, kIpcMagic, sizeof head.magic);
    head.layout = 1;
    head.owner_pid = static_cast<int32_t>(getpid());
    copy_string(head.backend, d->backend->short_name);
    std::memcpy(head.host, host_id().data(), sizeof head.host);
    head.bytes = *bytes;
    const xal_status_t s =
        d->hdr.table->mem_ipc_get(d->native, ptr, *bytes, h.bytes + sizeof(IpcHeader));
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    std::memcpy(h.bytes, &head, sizeof head);
    *out_handle = h;
    return XAL_SUCCESS;
  });
}

// Maps another process's memory. Thread-safe.
XAL_API xal_status_t xal_mem_open_ipc_handle(xal_device_t device, const xal_ipc_handle_t* handle,
                                             uint32_t flags, xal_devptr_t* out_ptr,
                                             size_t* out_bytes) {
  return entry("xal_mem_open_ipc_handle", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    if (!handle) return null_argument("handle");
    if (!out_ptr) return null_argument("out_ptr");
    if (flags != 0)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT, cat("unknown IPC open flags ", hex(flags)));
    if (!d->hdr.table->mem_ipc_open) return unsupported(d, "IPC handles");
    IpcHeader head{};
    std::memcpy(&head, handle->bytes, sizeof head);
    if (std::memcmp(head.magic, kIpcMagic, sizeof head.magic) != 0 || head.layout != 1)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  "the IPC handle is not one xal_mem_get_ipc_handle wrote (or of a newer layout)");
    head.backend[sizeof head.backend - 1] = 0;
    if (d->backend->short_name != head.backend)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("the IPC handle names memory of backend ", head.backend, ", device ",
                      d->index, " is of backend ", d->backend->short_name));
    if (std::memcmp(head.host, host_id().data(), sizeof head.host) != 0)
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  "the IPC handle was made on another host (or before this host restarted)");
    if (head.owner_pid == static_cast<int32_t>(getpid()))
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  "the IPC handle was made by this process: use its device pointer directly");
    if (head.owner_pid <= 0 || (kill(head.owner_pid, 0) != 0 && errno == ESRCH))
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("the process that exported the IPC handle (pid ", head.owner_pid,
                      ") has ended"));
    if (head.bytes == 0 || head.bytes > (uint64_t{1} << 62))
      return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                  cat("the IPC handle names ", head.bytes, " bytes"));
    xal_devptr_t p = 0;
    const xal_status_t s = d->hdr.table->mem_ipc_open(
        d->native, handle->bytes + sizeof(IpcHeader), head.bytes, head.owner_pid, &p);
    if (s != XAL_SUCCESS) return fail_backend(d->backend, d, s);
    if (const xal_status_t a = add_foreign(d, p, head.bytes, true); a != XAL_SUCCESS) {
      d->hdr.table->mem_ipc_close(d->native, p);
      return a;
    }
    *out_ptr = p;
    if (out_bytes) *out_bytes = head.bytes;
    return XAL_SUCCESS;
  });
}

// Unmaps memory opened from a handle. Thread-safe.
XAL_API xal_status_t xal_mem_close_ipc_handle(xal_device_t device, xal_devptr_t ptr) {
  return entry("xal_mem_close_ipc_handle", [&] {
    DeviceObj* d = as_device(device);
    if (!d) return bad_handle(device, "device");
    DeviceState& st = *d->state;
    {
      std::lock_guard lock(st.foreign_mu);
      const auto it = st.foreign.find(ptr);
      if (it == st.foreign.end() || !it->second.ipc)
        return fail(d, XAL_ERROR_INVALID_ARGUMENT,
                    cat("pointer ", hex(ptr), " of device ", d->index,
                        " was not opened with xal_mem_open_ipc_handle (or is closed)"));
      st.foreign.erase(it);
      st.registry.remove(ptr);
    }
    const xal_status_t s = d->hdr.table->mem_ipc_close(d->native, ptr);
    return s == XAL_SUCCESS ? s : fail_backend(d->backend, d, s);
  });
}

}  // extern "C"
