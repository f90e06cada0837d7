// Mock plugin entries of ABI 1.1 interop: imported memory and streams, IPC.
// A mock device pointer is a host address, so imported host memory and an
// IPC mapping are used in place; their ranges live in the device's
// ForeignMemory.
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <cstring>

#include "entries.h"

namespace xal::mock {

namespace {

// The vendor part of a mock IPC handle: where the exporter's arena file is.
struct IpcVendor {
  char magic[8];    // "xalmock"
  int32_t fd;       // the arena's memory file in the exporting process
  uint32_t device;  // the exporting device's index (for messages)
  uint64_t offset;  // of the allocation in the file
  uint64_t arena_bytes;
  uint64_t file_dev, file_ino;  // the file's identity: the importer checks it
};
static_assert(sizeof(IpcVendor) <= XAL_IPC_VENDOR_BYTES);
constexpr char kMagic[8] = "xalmock";

// True when every page of [p, p+bytes) is mapped in this process.
bool host_range_mapped(uint64_t p, uint64_t bytes) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t begin = p / page * page;
  const uint64_t end = (p + bytes + page - 1) / page * page;
  std::vector<unsigned char> residency(256);
  for (uint64_t at = begin; at < end;) {
    const uint64_t chunk = std::min<uint64_t>(end - at, residency.size() * page);
    if (mincore(reinterpret_cast<void*>(at), chunk, residency.data()) != 0) return false;
    at += chunk;
  }
  return true;
}

}  // namespace

xal_status_t mem_import(xal_bdevice_t* device, uint64_t native, size_t bytes, uint32_t flags,
                        xal_devptr_t* out_ptr) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_import", [&] {
    check_not_null(out_ptr, "mem_import: out_ptr");
    if (d.arena().contains(native, bytes)) {
      // The device's own memory, allocated through the backend directly.
      *out_ptr = native;
      return XAL_SUCCESS;
    }
    if (!(flags & XAL_MEM_IMPORT_HOST))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_import: [" + hex(native) + ", +" + std::to_string(bytes) +
                      ") is not memory of mock device " + std::to_string(d.index()) +
                      " (host memory needs XAL_MEM_IMPORT_HOST)");
    if (!host_range_mapped(native, bytes))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_import: host range [" + hex(native) + ", +" + std::to_string(bytes) +
                      ") is not mapped in this process");
    if (!d.foreign().add_host(native, bytes))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_import: host range [" + hex(native) + ", +" + std::to_string(bytes) +
                      ") overlaps memory already imported on mock device " +
                      std::to_string(d.index()));
    *out_ptr = native;
    return XAL_SUCCESS;
  });
}

xal_status_t mem_import_release(xal_bdevice_t* device, xal_devptr_t ptr) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_import_release", [&] {
    d.foreign().remove(ptr);  // nothing to do for the device's own memory
    return XAL_SUCCESS;
  });
}

xal_status_t stream_import(xal_bdevice_t* device, uint64_t native, uint32_t flags,
                           xal_bstream_t** out_stream) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "stream_import", [&] {
    check_not_null(out_stream, "stream_import: out_stream");
    (void)flags;
    // Looked up among the device's streams before it is ever dereferenced.
    Stream* s = reinterpret_cast<Stream*>(static_cast<uintptr_t>(native));
    if (!d.import_stream(s))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "stream_import: " + hex(native) + " is not a live stream of mock device " +
                      std::to_string(d.index()));
    *out_stream = to_handle<xal_bstream_t>(s);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_get(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes,
                         uint8_t* out_vendor) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_ipc_get", [&] {
    check_not_null(out_vendor, "mem_ipc_get: out_vendor");
    if (d.arena().fd() < 0)
      throw Error(XAL_ERROR_NOT_SUPPORTED,
                  "mem_ipc_get: mock device " + std::to_string(d.index()) +
                      " has anonymous memory (no memfd): it cannot be shared");
    if (!d.arena().contains(ptr, bytes))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_ipc_get: " + hex(ptr) + " is not memory of mock device " +
                      std::to_string(d.index()));
    IpcVendor v{};
    std::memcpy(v.magic, kMagic, sizeof v.magic);
    v.fd = d.arena().fd();
    v.device = d.index();
    v.offset = ptr - d.arena().base();
    v.arena_bytes = d.arena().capacity();
    struct stat st {};
    if (fstat(d.arena().fd(), &st) != 0)
      throw Error(XAL_ERROR_BACKEND, std::string("mem_ipc_get: fstat of the memory file: ") +
                                         std::strerror(errno));
    v.file_dev = static_cast<uint64_t>(st.st_dev);
    v.file_ino = static_cast<uint64_t>(st.st_ino);
    std::memcpy(out_vendor, &v, sizeof v);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_open(xal_bdevice_t* device, const uint8_t* vendor, size_t bytes,
                          int32_t owner_pid, xal_devptr_t* out_ptr) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_ipc_open", [&] {
    check_not_null(vendor, "mem_ipc_open: vendor");
    check_not_null(out_ptr, "mem_ipc_open: out_ptr");
    IpcVendor v{};
    std::memcpy(&v, vendor, sizeof v);
    if (std::memcmp(v.magic, kMagic, sizeof v.magic) != 0 || v.fd < 0 ||
        v.offset > v.arena_bytes || bytes > v.arena_bytes - v.offset)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_ipc_open: the handle's mock part is malformed");
    *out_ptr = d.foreign().open_ipc(owner_pid, v.fd, v.offset, bytes, v.file_dev, v.file_ino);
    return XAL_SUCCESS;
  });
}

xal_status_t mem_ipc_close(xal_bdevice_t* device, xal_devptr_t ptr) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "mem_ipc_close", [&] {
    if (!d.foreign().remove(ptr))
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "mem_ipc_close: " + hex(ptr) + " is not IPC memory of mock device " +
                      std::to_string(d.index()));
    return XAL_SUCCESS;
  });
}

}  // namespace xal::mock
