// sim_device.cpp -- the simulated driver's errors, initialisation, devices
// and contexts. SIMULATION ONLY.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sim_errors.h"
#include "sim_state.h"
#include "xal_common/strings.hpp"

namespace xalsim {

namespace {

size_t env_bytes(const char* name, size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr) return fallback;
  auto parsed = xal::common::parse_bytes(v);
  return parsed ? static_cast<size_t>(*parsed) : fallback;
}


#define XALSIM_INJECT(name) \
  if (CUresult injected_ = injected(name); injected_ != CUDA_SUCCESS) \
    return injected_;

CUresult sim_cuGetErrorName(CUresult error, const char** out) {
  switch (static_cast<int>(error)) {
#define XALSIM_NAME(name, value) \
  case value: *out = #name; return CUDA_SUCCESS;
    XALSIM_CUDA_ERRORS(XALSIM_NAME)
#undef XALSIM_NAME
    default:
      *out = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult sim_cuGetErrorString(CUresult error, const char** out) {
  switch (static_cast<int>(error)) {
#define XALSIM_TEXT(name, value) \
  case value: *out = "simulated driver: " #name; return CUDA_SUCCESS;
    XALSIM_CUDA_ERRORS(XALSIM_TEXT)
#undef XALSIM_TEXT
    default:
      *out = nullptr;
      return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult sim_cuInit(unsigned int flags) {
  XALSIM_INJECT("cuInit");
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  if (d.initialised) return CUDA_SUCCESS;
  if (const char* v = std::getenv("XALSIM_CUDA_DEVICES")) {
    d.device_count = std::atoi(v);
  }
  if (d.device_count <= 0) return CUDA_ERROR_NO_DEVICE;
  d.memory_per_device = env_bytes("XALSIM_CUDA_MEMORY", size_t{1} << 30);
  d.version = driver_version();
  for (int i = 0; i < d.device_count; ++i) {
    auto ctx = std::make_unique<Context>();
    ctx->device = i;
    for (int j = 0; j < d.device_count; ++j) {
      if (j != i) ctx->peers.insert(j);
    }
    d.contexts.push_back(std::move(ctx));
  }
  d.used.assign(static_cast<size_t>(d.device_count), 0);
  d.initialised = true;
  return CUDA_SUCCESS;
}

bool initialised() {
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  return d.initialised;
}

bool valid_device(CUdevice dev) {
  return initialised() && dev >= 0 && dev < driver().device_count;
}

CUresult sim_cuDriverGetVersion(int* out) {
  XALSIM_INJECT("cuDriverGetVersion");
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = driver_version();
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceGetCount(int* out) {
  XALSIM_INJECT("cuDeviceGetCount");
  if (!initialised()) return CUDA_ERROR_NOT_INITIALIZED;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = driver().device_count;
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceGet(CUdevice* out, int ordinal) {
  XALSIM_INJECT("cuDeviceGet");
  if (!initialised()) return CUDA_ERROR_NOT_INITIALIZED;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (!valid_device(ordinal)) return CUDA_ERROR_INVALID_DEVICE;
  *out = ordinal;
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceGetName(char* name, int len, CUdevice dev) {
  XALSIM_INJECT("cuDeviceGetName");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (name == nullptr || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(name, static_cast<size_t>(len),
                "xalsim CUDA device %d (simulated)", dev);
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  XALSIM_INJECT("cuDeviceGetUuid");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::memset(uuid->bytes, 0, sizeof uuid->bytes);
  std::memcpy(uuid->bytes, "XALSIM-CUDA", 11);
  uuid->bytes[15] = static_cast<char>(dev);
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  XALSIM_INJECT("cuDeviceTotalMem");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *bytes = driver().memory_per_device;
  return CUDA_SUCCESS;
}

// Figures of an H200 SXM, so that derived values look like the real card's.
CUresult sim_cuDeviceGetAttribute(int* out, CUdevice_attribute a, CUdevice dev) {
  XALSIM_INJECT("cuDeviceGetAttribute");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  switch (a) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *out = 132; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *out = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *out = 2619000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *out = 6144; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *out = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *out = 0; break;
    case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: *out = 1; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *out = 0x10 + dev; break;
    default: *out = 0; break;
  }
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceGetPCIBusId(char* id, int len, CUdevice dev) {
  XALSIM_INJECT("cuDeviceGetPCIBusId");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (id == nullptr || len < 13) return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(id, static_cast<size_t>(len), "0000:%02X:00.0", 0x10 + dev);
  return CUDA_SUCCESS;
}

CUresult sim_cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
  XALSIM_INJECT("cuDeviceCanAccessPeer");
  if (!valid_device(dev) || !valid_device(peer)) return CUDA_ERROR_INVALID_DEVICE;
  if (can == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *can = dev != peer && std::getenv("XALSIM_CUDA_NO_PEER") == nullptr;
  return CUDA_SUCCESS;
}

CUresult sim_cuDevicePrimaryCtxRetain(CUcontext* out, CUdevice dev) {
  XALSIM_INJECT("cuDevicePrimaryCtxRetain");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Driver& d = driver();
  std::lock_guard<std::mutex> lock(d.mutex);
  Context* ctx = d.contexts[static_cast<size_t>(dev)].get();
  // The context cannot be made again while the driver keeps its error.
  if (ctx->sticky_kept_by_reset) return ctx->sticky.load();
  ++ctx->retained;
  *out = reinterpret_cast<CUcontext>(ctx);
  return CUDA_SUCCESS;
}

CUresult sim_cuDevicePrimaryCtxRelease(CUdevice dev) {
  XALSIM_INJECT("cuDevicePrimaryCtxRelease");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  Driver& d = driver();
  Context* ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(d.mutex);
    ctx = d.contexts[static_cast<size_t>(dev)].get();
    if (ctx->retained <= 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (--ctx->retained > 0) return CUDA_SUCCESS;
  }
  reset_context(ctx);
  return CUDA_SUCCESS;
}

CUresult sim_cuDevicePrimaryCtxReset(CUdevice dev) {
  XALSIM_INJECT("cuDevicePrimaryCtxReset");
  if (!valid_device(dev)) return CUDA_ERROR_INVALID_DEVICE;
  Context* ctx = nullptr;
  {
    std::lock_guard<std::mutex> lock(driver().mutex);
    ctx = driver().contexts[static_cast<size_t>(dev)].get();
  }
  reset_context(ctx);
  return CUDA_SUCCESS;
}

CUresult sim_cuCtxSetCurrent(CUcontext c) {
  XALSIM_INJECT("cuCtxSetCurrent");
  Context* ctx = reinterpret_cast<Context*>(c);
  if (ctx != nullptr) {
    Driver& d = driver();
    std::lock_guard<std::mutex> lock(d.mutex);
    bool known = false;
    for (auto& c2 : d.contexts) known = known || c2.get() == ctx;
    if (!known) return CUDA_ERROR_INVALID_CONTEXT;
  }
  current = ctx;
  return CUDA_SUCCESS;
}

CUresult sim_cuCtxGetCurrent(CUcontext* out) {
  if (out == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *out = reinterpret_cast<CUcontext>(current);
  return CUDA_SUCCESS;
}

CUresult sim_cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
  XALSIM_INJECT("cuCtxEnablePeerAccess");
  CUresult err;
  Context* ctx = context_for_call(&err);
  if (ctx == nullptr) return err;
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  load_syncs(ctx);  // XALSIM_CUDA_LOAD_SYNCS=1: as a real driver may
  Context* other = reinterpret_cast<Context*>(peer);
  std::lock_guard<std::mutex> lock(driver().mutex);
  bool known = false;
  for (auto& c : driver().contexts) known = known || c.get() == other;
  if (other == nullptr || !known) return CUDA_ERROR_INVALID_CONTEXT;
  // As the real driver: no access to itself or where the hardware has none,
  // and a second enable is an error the caller must accept.
  if (other == ctx || std::getenv("XALSIM_CUDA_NO_PEER") != nullptr) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  if (!ctx->enabled_peers.insert(other->device).second) {
    return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
  }
  return CUDA_SUCCESS;
}

CUresult sim_cuCtxSynchronize() {
  XALSIM_INJECT("cuCtxSynchronize");
  CUresult err;
  Context* ctx = context_for_call(&err);
  if (ctx == nullptr) return err;
  std::vector<Stream*> streams;
  {
    std::lock_guard<std::mutex> lock(driver().mutex);
    streams.assign(ctx->streams.begin(), ctx->streams.end());
  }
  CUresult result = CUDA_SUCCESS;
  for (Stream* s : streams) {
    const CUresult r = s->drain();
    if (result == CUDA_SUCCESS) result = r;
  }
  const CUresult sticky = ctx->sticky.load();
  return sticky != CUDA_SUCCESS ? sticky : result;
}

}  // namespace

const std::vector<Symbol>& device_symbols() {
  static const std::vector<Symbol> symbols = {
#define S(name) {#name, reinterpret_cast<void*>(&sim_##name)}
      S(cuGetErrorName), S(cuGetErrorString), S(cuInit),
      S(cuDriverGetVersion), S(cuDeviceGet), S(cuDeviceGetCount),
      S(cuDeviceGetName), S(cuDeviceGetUuid), S(cuDeviceTotalMem),
      S(cuDeviceGetAttribute), S(cuDeviceGetPCIBusId), S(cuDeviceCanAccessPeer),
      S(cuDevicePrimaryCtxRetain), S(cuDevicePrimaryCtxRelease),
      S(cuDevicePrimaryCtxReset), S(cuCtxSetCurrent), S(cuCtxGetCurrent),
      S(cuCtxEnablePeerAccess), S(cuCtxSynchronize),
#undef S
  };
  return symbols;
}


}  // namespace xalsim
