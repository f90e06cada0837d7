// Simulated HIP streams, events, copies, peer copies and code objects.
// Each stream runs its work in order on its own worker thread; events
// complete when the stream reaches them and carry the host clock.
#include <cstring>

#include "sim_state.h"

namespace {

bool live_stream(xalsim::State& s, hipStream_t stream) {
  return stream == nullptr || s.streams.count(stream) != 0;
}

// A simulated code object is text: "XALSIM-HSACO" then kernel names, one
// per line. Kernel "fill_u32(uint32_t* dst, uint32_t value, uint64_t n)"
// is executed; any other listed name launches as a no-op.
constexpr std::string_view kModuleMagic = "XALSIM-HSACO\n";

}  // namespace

SIM_EXPORT hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned int) {
  SIM_BEGIN("hipStreamCreateWithFlags", true);
  if (stream == nullptr) return hipErrorInvalidValue;
  auto created = std::make_unique<ihipStream_t>();
  created->device = xalsim::current_device();
  *stream = created.get();
  s.streams.emplace(created.get(), std::move(created));
  return hipSuccess;
}

SIM_EXPORT hipError_t hipStreamDestroy(hipStream_t stream) {
  SIM_BEGIN("hipStreamDestroy", true);
  auto found = s.streams.find(stream);
  if (found == s.streams.end()) return hipErrorInvalidHandle;
  std::unique_ptr<ihipStream_t> owned = std::move(found->second);
  s.streams.erase(found);
  lock.unlock();
  owned.reset();  // runs what is queued, then stops the worker
  return hipSuccess;
}

SIM_EXPORT hipError_t hipStreamSynchronize(hipStream_t stream) {
  SIM_BEGIN("hipStreamSynchronize", true);
  if (!live_stream(s, stream)) return hipErrorInvalidHandle;
  if (stream == nullptr) return hipSuccess;
  lock.unlock();
  stream->worker->wait_idle();
  return hipSuccess;
}

SIM_EXPORT hipError_t hipStreamQuery(hipStream_t stream) {
  SIM_BEGIN("hipStreamQuery", true);
  if (!live_stream(s, stream)) return hipErrorInvalidHandle;
  if (stream == nullptr) return hipSuccess;
  return stream->worker->idle() ? hipSuccess : hipErrorNotReady;
}

namespace {

// Runs `work` on the stream's worker, or now for the null stream.
void submit(hipStream_t stream, std::function<void()> work) {
  if (stream == nullptr) {
    work();
  } else {
    stream->worker->enqueue(std::move(work));
  }
}

void wait_for(xalsim::State& s, const std::shared_ptr<ihipEvent_t>& event,
              uint64_t target) {
  std::unique_lock lock(s.event_mutex);
  s.event_done.wait(lock, [&] { return event->completed.load() >= target; });
}

}  // namespace

SIM_EXPORT hipError_t hipStreamWaitEvent(hipStream_t stream, hipEvent_t event,
                                         unsigned int) {
  SIM_BEGIN("hipStreamWaitEvent", true);
  auto found = s.events.find(event);
  if (!live_stream(s, stream) || found == s.events.end()) return hipErrorInvalidHandle;
  std::shared_ptr<ihipEvent_t> shared = found->second;
  const uint64_t target = shared->recorded.load();
  submit(stream, [&s, shared, target] { wait_for(s, shared, target); });
  return hipSuccess;
}

SIM_EXPORT hipError_t hipLaunchHostFunc(hipStream_t stream, hipHostFn_t fn, void* user) {
  SIM_BEGIN("hipLaunchHostFunc", true);
  if (!live_stream(s, stream) || fn == nullptr) return hipErrorInvalidValue;
  if (stream == nullptr) {
    lock.unlock();  // the function may call the runtime
    fn(user);
  } else {
    stream->worker->enqueue([fn, user] { fn(user); });
  }
  return hipSuccess;
}

SIM_EXPORT hipError_t hipEventCreateWithFlags(hipEvent_t* event, unsigned int flags) {
  SIM_BEGIN("hipEventCreateWithFlags", true);
  if (event == nullptr) return hipErrorInvalidValue;
  auto created = std::make_shared<ihipEvent_t>();
  created->device = xalsim::current_device();
  created->timing = (flags & hipEventDisableTiming) == 0;
  *event = created.get();
  s.events.emplace(created.get(), std::move(created));
  return hipSuccess;
}

SIM_EXPORT hipError_t hipEventDestroy(hipEvent_t event) {
  SIM_BEGIN("hipEventDestroy", true);
  // Work still queued keeps its own reference.
  return s.events.erase(event) == 1 ? hipSuccess : hipErrorInvalidHandle;
}

SIM_EXPORT hipError_t hipEventRecord(hipEvent_t event, hipStream_t stream) {
  SIM_BEGIN("hipEventRecord", true);
  auto found = s.events.find(event);
  if (found == s.events.end() || !live_stream(s, stream)) return hipErrorInvalidHandle;
  std::shared_ptr<ihipEvent_t> shared = found->second;
  const uint64_t target = ++shared->recorded;
  submit(stream, [&s, shared, target] {
    shared->when_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
    {
      std::lock_guard event_lock(s.event_mutex);
      shared->completed = target;
    }
    s.event_done.notify_all();
  });
  return hipSuccess;
}

SIM_EXPORT hipError_t hipEventSynchronize(hipEvent_t event) {
  SIM_BEGIN("hipEventSynchronize", true);
  auto found = s.events.find(event);
  if (found == s.events.end()) return hipErrorInvalidHandle;
  std::shared_ptr<ihipEvent_t> shared = found->second;
  lock.unlock();
  wait_for(s, shared, shared->recorded.load());
  return hipSuccess;
}

SIM_EXPORT hipError_t hipEventQuery(hipEvent_t event) {
  SIM_BEGIN("hipEventQuery", true);
  auto found = s.events.find(event);
  if (found == s.events.end()) return hipErrorInvalidHandle;
  return event->completed.load() >= event->recorded.load() ? hipSuccess
                                                           : hipErrorNotReady;
}

SIM_EXPORT hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t end) {
  SIM_BEGIN("hipEventElapsedTime", true);
  if (ms == nullptr) return hipErrorInvalidValue;
  if (s.events.count(start) == 0 || s.events.count(end) == 0) {
    return hipErrorInvalidHandle;
  }
  if (!start->timing || !end->timing) return hipErrorInvalidHandle;
  if (start->recorded == 0 || end->recorded == 0) return hipErrorInvalidHandle;
  if (start->completed < start->recorded || end->completed < end->recorded) {
    return hipErrorNotReady;
  }
  *ms = static_cast<float>(end->when_ns - start->when_ns) / 1e6f;
  return hipSuccess;
}

namespace {

hipError_t copy(xalsim::State& s, void* dst, const void* src, size_t bytes,
                bool dst_device, bool src_device, hipStream_t stream,
                int dst_ordinal = -1, int src_ordinal = -1) {
  if (!live_stream(s, stream)) return hipErrorInvalidHandle;
  if (dst == nullptr || src == nullptr) return hipErrorInvalidValue;
  if (dst_device && !xalsim::in_allocation(s, dst, bytes, dst_ordinal)) {
    return hipErrorInvalidValue;
  }
  if (src_device && !xalsim::in_allocation(s, src, bytes, src_ordinal)) {
    return hipErrorInvalidValue;
  }
  submit(stream, [dst, src, bytes] { std::memmove(dst, src, bytes); });
  return hipSuccess;
}

}  // namespace

SIM_EXPORT hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t bytes,
                                         hipStream_t stream) {
  SIM_BEGIN("hipMemcpyHtoDAsync", true);
  return copy(s, dst, src, bytes, true, false, stream);
}

SIM_EXPORT hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t bytes,
                                         hipStream_t stream) {
  SIM_BEGIN("hipMemcpyDtoHAsync", true);
  return copy(s, dst, src, bytes, false, true, stream);
}

SIM_EXPORT hipError_t hipMemcpyDtoDAsync(hipDeviceptr_t dst, hipDeviceptr_t src,
                                         size_t bytes, hipStream_t stream) {
  SIM_BEGIN("hipMemcpyDtoDAsync", true);
  return copy(s, dst, src, bytes, true, true, stream);
}

#ifndef XALSIM_OMIT_MEMSET
SIM_EXPORT hipError_t hipMemsetD8Async(hipDeviceptr_t dst, unsigned char value,
                                       size_t bytes, hipStream_t stream) {
  SIM_BEGIN("hipMemsetD8Async", true);
  if (!live_stream(s, stream)) return hipErrorInvalidHandle;
  if (!xalsim::in_allocation(s, dst, bytes, -1)) return hipErrorInvalidValue;
  submit(stream, [dst, value, bytes] { std::memset(dst, value, bytes); });
  return hipSuccess;
}
#endif

SIM_EXPORT hipError_t hipDeviceCanAccessPeer(int* can, int device, int peer) {
  SIM_BEGIN("hipDeviceCanAccessPeer", false);
  const int count = static_cast<int>(s.devices.size());
  if (can == nullptr || device < 0 || peer < 0 || device >= count || peer >= count) {
    return hipErrorInvalidDevice;
  }
  *can = device != peer ? 1 : 0;
  return hipSuccess;
}

SIM_EXPORT hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int) {
  SIM_BEGIN("hipDeviceEnablePeerAccess", true);
  if (peer < 0 || peer >= static_cast<int>(s.devices.size())) {
    return hipErrorInvalidDevice;
  }
  return s.devices[xalsim::current_device()].peers.insert(peer).second
             ? hipSuccess
             : hipErrorPeerAccessAlreadyEnabled;
}

SIM_EXPORT hipError_t hipMemcpyPeerAsync(void* dst, int dst_device, const void* src,
                                         int src_device, size_t bytes,
                                         hipStream_t stream) {
  SIM_BEGIN("hipMemcpyPeerAsync", true);
  return copy(s, dst, src, bytes, true, true, stream, dst_device, src_device);
}

SIM_EXPORT hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  SIM_BEGIN("hipModuleLoadData", true);
  if (module == nullptr || image == nullptr) return hipErrorInvalidValue;
  const char* text = static_cast<const char*>(image);
  if (std::strncmp(text, kModuleMagic.data(), kModuleMagic.size()) != 0) {
    return hipErrorInvalidImage;
  }
  auto created = std::make_unique<ihipModule_t>();
  created->device = xalsim::current_device();
  std::string names(text + kModuleMagic.size());
  size_t start = 0;
  while (start < names.size()) {
    size_t end = names.find('\n', start);
    if (end == std::string::npos) end = names.size();
    if (end > start) {
      auto function = std::make_unique<ihipModuleSymbol_t>();
      function->name = names.substr(start, end - start);
      created->functions.push_back(std::move(function));
    }
    start = end + 1;
  }
  *module = created.get();
  s.modules.emplace(created.get(), std::move(created));
  return hipSuccess;
}

SIM_EXPORT hipError_t hipModuleUnload(hipModule_t module) {
  SIM_BEGIN("hipModuleUnload", true);
  ++s.module_unloads;
  return s.modules.erase(module) == 1 ? hipSuccess : hipErrorInvalidHandle;
}

// Test hook: how many hipModuleUnload calls reached the runtime (not
// refused by XALSIM_HIP_FAIL).
SIM_EXPORT int xalsim_hip_module_unloads() {
  xalsim::State& s = xalsim::state();
  std::lock_guard lock(s.mutex);
  return s.module_unloads;
}

SIM_EXPORT hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module,
                                           const char* name) {
  SIM_BEGIN("hipModuleGetFunction", true);
  if (function == nullptr || name == nullptr) return hipErrorInvalidValue;
  if (s.modules.count(module) == 0) return hipErrorInvalidHandle;
  for (const auto& candidate : module->functions) {
    if (candidate->name == name) {
      *function = candidate.get();
      return hipSuccess;
    }
  }
  return hipErrorNotFound;
}

SIM_EXPORT hipError_t hipModuleLaunchKernel(hipFunction_t function, unsigned int gx,
                                            unsigned int gy, unsigned int gz,
                                            unsigned int bx, unsigned int by,
                                            unsigned int bz, unsigned int,
                                            hipStream_t stream, void** params,
                                            void**) {
  SIM_BEGIN("hipModuleLaunchKernel", true);
  if (function == nullptr || !live_stream(s, stream)) return hipErrorInvalidHandle;
  if (gx * gy * gz == 0 || bx * by * bz == 0 || bx * by * bz > 1024) {
    return hipErrorInvalidConfiguration;
  }
  if (function->name == "fill_u32") {
    if (params == nullptr) return hipErrorInvalidValue;
    auto* dst = *static_cast<uint32_t**>(params[0]);
    const uint32_t value = *static_cast<uint32_t*>(params[1]);
    const uint64_t n = *static_cast<uint64_t*>(params[2]);
    // An out-of-range store faults the device, as on real hardware.
    if (!xalsim::in_allocation(s, dst, n * sizeof(uint32_t), -1)) {
      s.devices[xalsim::current_device()].sticky = hipErrorIllegalAddress;
      return hipErrorIllegalAddress;
    }
    submit(stream, [dst, value, n] {
      for (uint64_t i = 0; i < n; ++i) dst[i] = value;
    });
  }
  return hipSuccess;
}
