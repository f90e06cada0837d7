// Simulated HIP interop: pointer queries, stream queries and IPC handles.
// hipStreamGetDevice (HIP 5.6, not in the 5.2 header) is defined against
// the backend's declaration in src/hip_api.h, so that the compiler checks
// its signature.
// An IPC handle names a block of the exporter's shareable memory
// (xalsim/shared_memory.h) by process, file descriptor and offset; the
// importer maps it through /proc/<pid>/fd/<fd>, so both processes see the
// same bytes, as two processes mapping one GPU allocation do.
#include <unistd.h>

#include <cstring>

#include "hip_api.h"
#include "sim_state.h"

namespace {

// The simulator's IPC handle, inside hipIpcMemHandle_t's 64 bytes.
struct IpcHandle {
  char magic[8];  // "xalsimH"
  xalsim::SharedRange range;
  int32_t device;
};
static_assert(sizeof(IpcHandle) <= HIP_IPC_HANDLE_SIZE);
constexpr char kIpcMagic[8] = "xalsimH";

// The allocation holding `pointer` (its base in *base), or nullptr.
xalsim::Allocation* find(xalsim::State& s, const void* pointer, uintptr_t* base) {
  const auto value = reinterpret_cast<uintptr_t>(pointer);
  auto found = s.allocations.upper_bound(value);
  if (found == s.allocations.begin()) return nullptr;
  --found;
  if (value >= found->first + found->second.size) return nullptr;
  *base = found->first;
  return &found->second;
}

bool live_stream(xalsim::State& s, hipStream_t stream) {
  return stream == nullptr || s.streams.count(stream) != 0;
}

}  // namespace

// HIP 5 layout and enumerators (hipMemoryTypeDevice 1): the runtime
// version the simulator reports.
SIM_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes,
                                              const void* pointer) {
  SIM_BEGIN("hipPointerGetAttributes", false);
  if (attributes == nullptr || pointer == nullptr) return hipErrorInvalidValue;
  uintptr_t base = 0;
  *attributes = hipPointerAttribute_t{};
  if (xalsim::Allocation* a = find(s, pointer, &base); a != nullptr) {
    attributes->memoryType = hipMemoryTypeDevice;
    attributes->device = a->device;
    attributes->devicePointer = const_cast<void*>(pointer);
    return hipSuccess;
  }
  void* host = const_cast<void*>(pointer);
  if (s.host_allocations.count(host) != 0 || s.registered.count(host) != 0) {
    attributes->memoryType = hipMemoryTypeHost;
    attributes->device = xalsim::current_device();
    attributes->hostPointer = host;
    return hipSuccess;
  }
  return hipErrorInvalidValue;  // memory the runtime does not know (HIP 5)
}

SIM_EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t* base_out, size_t* size,
                                            hipDeviceptr_t pointer) {
  SIM_BEGIN("hipMemGetAddressRange", false);
  uintptr_t base = 0;
  xalsim::Allocation* a = find(s, pointer, &base);
  if (a == nullptr) return hipErrorNotFound;
  if (base_out != nullptr) *base_out = reinterpret_cast<hipDeviceptr_t>(base);
  if (size != nullptr) *size = a->size;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipStreamGetFlags(hipStream_t stream, unsigned int* flags) {
  SIM_BEGIN("hipStreamGetFlags", false);
  if (flags == nullptr) return hipErrorInvalidValue;
  if (!live_stream(s, stream)) return hipErrorContextIsDestroyed;
  *flags = 0;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipStreamGetDevice(hipStream_t stream, hipDevice_t* device) {
  SIM_BEGIN("hipStreamGetDevice", false);
  if (device == nullptr) return hipErrorInvalidValue;
  if (!live_stream(s, stream)) return hipErrorContextIsDestroyed;
  *device = stream != nullptr ? stream->device : xalsim::current_device();
  return hipSuccess;
}

SIM_EXPORT hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* pointer) {
  SIM_BEGIN("hipIpcGetMemHandle", true);
  if (handle == nullptr || pointer == nullptr) return hipErrorInvalidValue;
  uintptr_t base = 0;
  xalsim::Allocation* a = find(s, pointer, &base);
  if (a == nullptr || a->ipc) return hipErrorInvalidValue;
  const std::optional<xalsim::SharedRange> range = a->data.share();
  if (!range) return hipErrorNotSupported;  // no memfd on this host
  IpcHandle h{};
  std::memcpy(h.magic, kIpcMagic, sizeof h.magic);
  h.range = *range;
  h.device = a->device;
  std::memset(handle, 0, sizeof *handle);
  std::memcpy(handle->reserved, &h, sizeof h);
  return hipSuccess;
}

// flags: hipIpcMemLazyEnablePeerAccess, 0 in HIP 5 (the simulated version).
SIM_EXPORT hipError_t hipIpcOpenMemHandle(void** pointer, hipIpcMemHandle_t handle,
                                          unsigned int flags) {
  SIM_BEGIN("hipIpcOpenMemHandle", true);
  if (pointer == nullptr || flags != 0) return hipErrorInvalidValue;
  IpcHandle h{};
  std::memcpy(&h, handle.reserved, sizeof h);
  if (std::memcmp(h.magic, kIpcMagic, sizeof h.magic) != 0 || h.range.bytes == 0) {
    return hipErrorInvalidValue;
  }
  // A process maps its own memory directly (the real runtime refuses too).
  if (h.range.pid == static_cast<int32_t>(getpid())) return hipErrorInvalidContext;
  std::string error;
  xalsim::Block block = xalsim::Block::open(h.range, &error);
  if (!block) return hipErrorMapFailed;
  xalsim::Allocation allocation;
  allocation.data = std::move(block);
  allocation.size = h.range.bytes;
  allocation.device = xalsim::current_device();
  allocation.ipc = true;
  void* mapped = allocation.data.data();
  s.allocations.emplace(reinterpret_cast<uintptr_t>(mapped), std::move(allocation));
  *pointer = mapped;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipIpcCloseMemHandle(void* pointer) {
  SIM_BEGIN("hipIpcCloseMemHandle", true);
  auto found = s.allocations.find(reinterpret_cast<uintptr_t>(pointer));
  if (found == s.allocations.end() || !found->second.ipc) return hipErrorInvalidValue;
  s.allocations.erase(found);  // unmaps
  return hipSuccess;
}
