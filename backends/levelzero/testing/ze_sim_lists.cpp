// Simulated Level Zero immediate command lists, events, copies, fills,
// SPIR-V modules and kernels. Each list runs its commands on its own worker
// thread: in order when created with the in-order flag, else only barriers
// and waits order them (see _ze_command_list_handle_t).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>
#include <string_view>
#include <thread>

#include "sim_state.h"

namespace {

// Queues the list's deferred commands (see _ze_command_list_handle_t), last
// first. The caller holds the simulator's lock.
void flush(ze_command_list_handle_t list) {
  for (auto it = list->deferred.rbegin(); it != list->deferred.rend(); ++it) {
    list->worker->enqueue(std::move(*it));
  }
  list->deferred.clear();
}

// Runs `work` on the list's worker, then signals `event` (if any). The
// events it signals or waits on (`uses`) count it as queued until it ran.
// An `ordering` command (barrier, wait) runs after every command appended
// before it; on a list that is not in order other commands are deferred.
void submit(xalsim::State& s, ze_command_list_handle_t list, ze_event_handle_t event,
            std::function<void()> work,
            std::vector<std::shared_ptr<_ze_event_handle_t>> uses = {},
            bool ordering = false) {
  std::shared_ptr<_ze_event_handle_t> shared;
  if (event != nullptr && xalsim::live(s, event)) shared = xalsim::share(s, event);
  for (const auto& used : uses) ++used->queued;
  if (shared) ++shared->queued;
  std::function<void()> task = [&s, shared, uses, work = std::move(work)] {
    if (work) work();
    for (const auto& used : uses) --used->queued;
    if (shared) {
      --shared->queued;  // before the signal that lets the host destroy it
      shared->timestamp = xalsim::timer_ticks(s);
      {
        std::lock_guard lock(s.event_mutex);
        shared->signaled = true;
      }
      s.event_done.notify_all();
    }
  };
  if (!list->in_order && !ordering) {
    list->deferred.push_back(std::move(task));
    return;
  }
  flush(list);
  list->worker->enqueue(std::move(task));
}

// Submits a launch of `kernel` running `work`: the kernel and its module
// count it as queued until it ran.
void launch(xalsim::State& s, ze_command_list_handle_t list, ze_kernel_handle_t kernel,
            ze_event_handle_t event, std::function<void()> work) {
  std::shared_ptr<_ze_kernel_handle_t> launched = xalsim::share(s, kernel);
  ++launched->queued;
  ++launched->module->queued;
  submit(s, list, event, [launched, work = std::move(work)] {
    if (work) work();
    --launched->module->queued;
    --launched->queued;
  });
}

// With XALSIM_ZE_STRICT_EVENTS=1, counts and reports (stderr) a destroy
// the spec forbids: `what` is still used by queued commands.
void misuse(xalsim::State& s, const std::string& what) {
  if (!xalsim::env_flag("XALSIM_ZE_STRICT_EVENTS")) return;
  ++s.event_misuses;
  std::fprintf(stderr, "xalsim (Level Zero): %s\n", what.c_str());
}

bool list_ok(xalsim::State& s, ze_command_list_handle_t list) {
  return xalsim::live(s, list);
}

constexpr uint32_t kSpirvMagic = 0x07230203;

}  // namespace

SIM_EXPORT ze_result_t zeCommandListCreateImmediate(ze_context_handle_t context,
                                                    ze_device_handle_t device,
                                                    const ze_command_queue_desc_t* desc,
                                                    ze_command_list_handle_t* out) {
  SIM_BEGIN("zeCommandListCreateImmediate", true);
  if (!xalsim::live(s, context) || device == nullptr || desc == nullptr || out == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (desc->ordinal >= 2) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  const bool in_order_flag = (desc->flags & 2u) != 0;  // ZE_COMMAND_QUEUE_FLAG_IN_ORDER
  // XALSIM_ZE_NO_IN_ORDER: a driver that refuses the flag it does not know;
  // below API 1.7 a driver that accepts it and ignores it.
  if (in_order_flag && xalsim::env_flag("XALSIM_ZE_NO_IN_ORDER")) {
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  }
  auto* list = xalsim::make<_ze_command_list_handle_t>(s);
  ++s.live_lists;
  list->device = device;
  list->context = context;
  list->in_order = in_order_flag && s.api_version >= ZE_MAKE_VERSION(1, 7);
  *out = list;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListDestroy(ze_command_list_handle_t list) {
  SIM_BEGIN("zeCommandListDestroy", false);
  if (!xalsim::live(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::shared_ptr<_ze_command_list_handle_t> owned = xalsim::share(s, list);
  flush(list);
  xalsim::destroy(s, list);
  --s.live_lists;
  lock.unlock();
  owned.reset();  // runs what is queued, then stops the worker
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListAppendBarrier(ze_command_list_handle_t list,
                                                  ze_event_handle_t event, uint32_t,
                                                  ze_event_handle_t*) {
  SIM_BEGIN("zeCommandListAppendBarrier", true);
  if (!list_ok(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  submit(s, list, event, nullptr, {}, true);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListAppendWaitOnEvents(ze_command_list_handle_t list,
                                                       uint32_t count,
                                                       ze_event_handle_t* events) {
  SIM_BEGIN("zeCommandListAppendWaitOnEvents", true);
  if (!list_ok(s, list) || (count > 0 && events == nullptr)) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  std::vector<std::shared_ptr<_ze_event_handle_t>> waits;
  for (uint32_t i = 0; i < count; ++i) {
    if (!xalsim::live(s, events[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    // Only the devices the pool was created for may use its events.
    const std::vector<ze_device_handle_t>& visible = events[i]->pool->devices;
    if (!visible.empty() &&
        std::find(visible.begin(), visible.end(), list->device) == visible.end()) {
      return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    waits.push_back(xalsim::share(s, events[i]));
  }
  submit(
      s, list, nullptr,
      [&s, waits] {
        std::unique_lock lock(s.event_mutex);
        for (const auto& event : waits) {
          s.event_done.wait(lock, [&] { return event->signaled.load(); });
        }
      },
      waits, true);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t list,
                                                     void* dst, const void* src,
                                                     size_t size, ze_event_handle_t event,
                                                     uint32_t, ze_event_handle_t*) {
  SIM_BEGIN("zeCommandListAppendMemoryCopy", true);
  if (!list_ok(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!xalsim::operand_ok(s, dst, size) || !xalsim::operand_ok(s, src, size)) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  submit(s, list, event, [dst, src, size] { std::memmove(dst, src, size); });
  return ZE_RESULT_SUCCESS;
}

#ifndef XALSIM_OMIT_FILL
SIM_EXPORT ze_result_t zeCommandListAppendMemoryFill(ze_command_list_handle_t list,
                                                     void* dst, const void* pattern,
                                                     size_t pattern_size, size_t size,
                                                     ze_event_handle_t event, uint32_t,
                                                     ze_event_handle_t*) {
  SIM_BEGIN("zeCommandListAppendMemoryFill", true);
  if (!list_ok(s, list)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (pattern == nullptr || pattern_size == 0 || size % pattern_size != 0 ||
      xalsim::find(s, dst) == nullptr || !xalsim::operand_ok(s, dst, size)) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  std::vector<unsigned char> bytes(static_cast<const unsigned char*>(pattern),
                                   static_cast<const unsigned char*>(pattern) + pattern_size);
  submit(s, list, event, [dst, size, bytes] {
    auto* out = static_cast<unsigned char*>(dst);
    if (bytes.size() == 1) {
      std::memset(out, bytes[0], size);
      return;
    }
    for (size_t i = 0; i < size; ++i) out[i] = bytes[i % bytes.size()];
  });
  return ZE_RESULT_SUCCESS;
}
#endif  // XALSIM_OMIT_FILL

SIM_EXPORT ze_result_t zeEventPoolCreate(ze_context_handle_t context,
                                         const ze_event_pool_desc_t* desc,
                                         uint32_t device_count, ze_device_handle_t* devices,
                                         ze_event_pool_handle_t* out) {
  SIM_BEGIN("zeEventPoolCreate", true);
  if (!xalsim::live(s, context) || desc == nullptr || out == nullptr || desc->count == 0 ||
      (device_count > 0 && devices == nullptr)) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  auto* pool = xalsim::make<_ze_event_pool_handle_t>(s);
  pool->flags = desc->flags;
  pool->count = desc->count;
  pool->devices.assign(devices, devices + device_count);
  *out = pool;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeEventPoolDestroy(ze_event_pool_handle_t pool) {
  SIM_BEGIN("zeEventPoolDestroy", false);
  if (!xalsim::destroy(s, pool)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  for (ze_event_handle_t event : s.events) {
    if (event->pool == pool && event->queued > 0) {
      misuse(s, "zeEventPoolDestroy: an event of the pool is used by queued commands");
    }
  }
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeEventCreate(ze_event_pool_handle_t pool, const ze_event_desc_t* desc,
                                     ze_event_handle_t* out) {
  SIM_BEGIN("zeEventCreate", true);
  if (!xalsim::live(s, pool) || desc == nullptr || out == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (desc->index >= pool->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  auto* event = xalsim::make<_ze_event_handle_t>(s);
  event->pool = pool;
  s.events.insert(event);
  *out = event;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeEventDestroy(ze_event_handle_t event) {
  SIM_BEGIN("zeEventDestroy", false);
  if (!xalsim::live(s, event)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (const int queued = event->queued; queued > 0) {
    misuse(s, "zeEventDestroy: the event is used by " + std::to_string(queued) +
                  " queued command(s)");
  }
  s.events.erase(event);
  xalsim::destroy(s, event);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeEventHostSynchronize(ze_event_handle_t event, uint64_t timeout) {
  SIM_BEGIN("zeEventHostSynchronize", true);
  if (!xalsim::live(s, event)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  std::shared_ptr<_ze_event_handle_t> shared = xalsim::share(s, event);
  lock.unlock();
  std::unique_lock event_lock(s.event_mutex);
  auto done = [&] { return shared->signaled.load(); };
  if (s.hold_host_waits) {
    ++s.held_waits;
    s.event_done.notify_all();
    s.event_done.wait(event_lock, [&] { return !s.hold_host_waits; });
    --s.held_waits;
  }
  ++s.host_waiting;
  s.last_wait_timeout = timeout;
  bool signaled = true;
  if (timeout == UINT64_MAX) {
    s.event_done.wait(event_lock, done);
  } else {
    signaled = s.event_done.wait_for(event_lock, std::chrono::nanoseconds(timeout), done);
  }
  --s.host_waiting;
  return signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

// Test hooks: how many threads wait in zeEventHostSynchronize now; and
// signalling every live event (ending every wait, so that a test that
// failed with lists stuck can end).
SIM_EXPORT int xalsim_ze_host_waiting() {
  xalsim::State& s = xalsim::state();
  std::lock_guard lock(s.event_mutex);
  return s.host_waiting;
}

// Test hook: the timeout (ns) of the last zeEventHostSynchronize.
SIM_EXPORT uint64_t xalsim_ze_last_wait_timeout() {
  xalsim::State& s = xalsim::state();
  std::lock_guard lock(s.event_mutex);
  return s.last_wait_timeout;
}

SIM_EXPORT void xalsim_ze_signal_every_event() {
  xalsim::State& s = xalsim::state();
  {
    std::lock_guard lock(s.mutex);
    std::lock_guard event_lock(s.event_mutex);
    for (ze_event_handle_t event : s.events) event->signaled = true;
  }
  s.event_done.notify_all();
}

// Test hooks: how many contexts (kind 0), command lists (kind 1) or events
// (kind 2) are live, and how many destroys XALSIM_ZE_STRICT_EVENTS counted
// (of events, pools, kernels and modules still used by queued commands).
SIM_EXPORT int xalsim_ze_live_objects(int kind) {
  xalsim::State& s = xalsim::state();
  std::lock_guard lock(s.mutex);
  if (kind == 0) return s.live_contexts;
  return kind == 1 ? s.live_lists : static_cast<int>(s.events.size());
}

// Test hook: stamps events with this time in ns from now on (0: the host
// clock again).
SIM_EXPORT void xalsim_ze_set_clock_ns(uint64_t ns) { xalsim::state().fixed_clock_ns = ns; }

SIM_EXPORT int xalsim_ze_event_misuses() {
  xalsim::State& s = xalsim::state();
  std::lock_guard lock(s.mutex);
  return s.event_misuses;
}

// Test hooks: while `hold` is set, host waits stop in zeEventHostSynchronize
// (so a test can act while a thread is known to wait there); and waiting
// until `count` threads are held there.
SIM_EXPORT void xalsim_ze_hold_host_waits(int hold) {
  xalsim::State& s = xalsim::state();
  {
    std::lock_guard lock(s.event_mutex);
    s.hold_host_waits = hold != 0;
  }
  s.event_done.notify_all();
}

SIM_EXPORT void xalsim_ze_wait_for_held_waits(int count) {
  xalsim::State& s = xalsim::state();
  std::unique_lock lock(s.event_mutex);
  s.event_done.wait(lock, [&] { return s.held_waits >= count; });
}

SIM_EXPORT ze_result_t zeEventQueryStatus(ze_event_handle_t event) {
  SIM_BEGIN("zeEventQueryStatus", true);
  if (!xalsim::live(s, event)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return event->signaled ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

SIM_EXPORT ze_result_t zeEventHostReset(ze_event_handle_t event) {
  SIM_BEGIN("zeEventHostReset", true);
  if (!xalsim::live(s, event)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  event->signaled = false;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeEventQueryKernelTimestamp(ze_event_handle_t event,
                                                   ze_kernel_timestamp_result_t* out) {
  SIM_BEGIN("zeEventQueryKernelTimestamp", true);
  if (!xalsim::live(s, event) || out == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if ((event->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) == 0) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (!event->signaled) return ZE_RESULT_NOT_READY;
  // 32 valid bits, as the device properties say.
  const uint64_t ticks = event->timestamp & 0xffffffffull;
  out->global = {ticks, ticks};
  out->context = {ticks, ticks};
  return ZE_RESULT_SUCCESS;
}

// A simulated SPIR-V module: the SPIR-V magic word, then text lines
// "kernel NAME". A line "error: TEXT" makes the build fail with TEXT in the
// build log; a wrong magic word fails the build too. Kernel "fill_u32"
// (dst pointer, uint32 value, uint64 count) runs, kernel "wait_u32" (flag
// pointer, uint32 value) runs until the flag holds the value; others are
// no-ops.
SIM_EXPORT ze_result_t zeModuleCreate(ze_context_handle_t context, ze_device_handle_t device,
                                      const ze_module_desc_t* desc, ze_module_handle_t* out,
                                      ze_module_build_log_handle_t* log_out) {
  SIM_BEGIN("zeModuleCreate", true);
  if (!xalsim::live(s, context) || desc == nullptr || out == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
  auto* log = xalsim::make<_ze_module_build_log_handle_t>(s);
  if (log_out != nullptr) *log_out = log;
  uint32_t magic = 0;
  if (desc->inputSize < 4 || desc->pInputModule == nullptr ||
      (std::memcpy(&magic, desc->pInputModule, 4), magic != kSpirvMagic)) {
    log->text = "error: input is not SPIR-V (bad magic number)";
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  std::string_view text(reinterpret_cast<const char*>(desc->pInputModule) + 4,
                        desc->inputSize - 4);
  auto* module = xalsim::make<_ze_module_handle_t>(s);
  module->device = device;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (line.starts_with("kernel ")) module->kernels.emplace_back(line.substr(7));
    if (line.starts_with("error: ")) log->text += std::string(line) + "\n";
    start = end + 1;
  }
  if (!log->text.empty()) {
    xalsim::destroy(s, module);
    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
  }
  *out = module;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeModuleDestroy(ze_module_handle_t module) {
  SIM_BEGIN("zeModuleDestroy", false);
  if (!xalsim::live(s, module)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (const int queued = module->queued; queued > 0) {
    misuse(s, "zeModuleDestroy: " + std::to_string(queued) +
                  " launch(es) of its kernels still queued");
  }
  xalsim::destroy(s, module);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t log,
                                                 size_t* size, char* text) {
  SIM_BEGIN("zeModuleBuildLogGetString", false);
  if (!xalsim::live(s, log) || size == nullptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (text == nullptr) {
    *size = log->text.size() + 1;
    return ZE_RESULT_SUCCESS;
  }
  const size_t n = std::min(*size, log->text.size() + 1);
  std::memcpy(text, log->text.c_str(), n);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t log) {
  SIM_BEGIN("zeModuleBuildLogDestroy", false);
  return xalsim::destroy(s, log) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

SIM_EXPORT ze_result_t zeKernelCreate(ze_module_handle_t module, const ze_kernel_desc_t* desc,
                                      ze_kernel_handle_t* out) {
  SIM_BEGIN("zeKernelCreate", true);
  if (!xalsim::live(s, module) || desc == nullptr || desc->pKernelName == nullptr ||
      out == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  for (const std::string& name : module->kernels) {
    if (name == desc->pKernelName) {
      auto* kernel = xalsim::make<_ze_kernel_handle_t>(s);
      kernel->name = name;
      kernel->module = xalsim::share(s, module);
      *out = kernel;
      return ZE_RESULT_SUCCESS;
    }
  }
  return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
}

SIM_EXPORT ze_result_t zeKernelDestroy(ze_kernel_handle_t kernel) {
  SIM_BEGIN("zeKernelDestroy", false);
  if (!xalsim::live(s, kernel)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (const int queued = kernel->queued; queued > 0) {
    misuse(s, "zeKernelDestroy: " + std::to_string(queued) + " launch(es) still queued");
  }
  xalsim::destroy(s, kernel);
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t kernel, uint32_t x, uint32_t y,
                                            uint32_t z) {
  SIM_BEGIN("zeKernelSetGroupSize", true);
  if (!xalsim::live(s, kernel)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (x == 0 || y == 0 || z == 0 || uint64_t{x} * y * z > 1024) {
    return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
  }
  kernel->group[0] = x;
  kernel->group[1] = y;
  kernel->group[2] = z;
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t kernel, uint32_t index,
                                                size_t size, const void* value) {
  SIM_BEGIN("zeKernelSetArgumentValue", true);
  if (!xalsim::live(s, kernel)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (index >= 16) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
  if (kernel->args.size() <= index) kernel->args.resize(index + 1);
  const auto* bytes = static_cast<const unsigned char*>(value);
  kernel->args[index].assign(bytes, bytes + (value != nullptr ? size : 0));
  return ZE_RESULT_SUCCESS;
}

SIM_EXPORT ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t list,
                                                       ze_kernel_handle_t kernel,
                                                       const ze_group_count_t* groups,
                                                       ze_event_handle_t event, uint32_t,
                                                       ze_event_handle_t*) {
  SIM_BEGIN("zeCommandListAppendLaunchKernel", true);
  if (!list_ok(s, list) || !xalsim::live(s, kernel) || groups == nullptr) {
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  if (kernel->name == "fill_u32") {
    if (kernel->args.size() < 3 || kernel->args[0].size() != 8 ||
        kernel->args[1].size() != 4 || kernel->args[2].size() != 8) {
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    }
    uint32_t* dst = nullptr;
    uint32_t value = 0;
    uint64_t n = 0;
    std::memcpy(&dst, kernel->args[0].data(), 8);
    std::memcpy(&value, kernel->args[1].data(), 4);
    std::memcpy(&n, kernel->args[2].data(), 8);
    // A store outside device memory faults the GPU: the device is lost.
    if (xalsim::find(s, dst) == nullptr || !xalsim::operand_ok(s, dst, n * 4)) {
      s.lost = true;
      return ZE_RESULT_ERROR_DEVICE_LOST;
    }
    launch(s, list, kernel, event, [dst, value, n] {
      for (uint64_t i = 0; i < n; ++i) dst[i] = value;
    });
    return ZE_RESULT_SUCCESS;
  }
  if (kernel->name == "wait_u32") {
    if (kernel->args.size() < 2 || kernel->args[0].size() != 8 ||
        kernel->args[1].size() != 4) {
      return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
    }
    uint32_t* flag = nullptr;
    uint32_t value = 0;
    std::memcpy(&flag, kernel->args[0].data(), 8);
    std::memcpy(&value, kernel->args[1].data(), 4);
    if (xalsim::find(s, flag) == nullptr || !xalsim::operand_ok(s, flag, 4)) {
      s.lost = true;
      return ZE_RESULT_ERROR_DEVICE_LOST;
    }
    // Polls memory the host writes, as a kernel spinning on a flag does.
    launch(s, list, kernel, event, [flag, value] {
      while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != value) std::this_thread::yield();
    });
    return ZE_RESULT_SUCCESS;
  }
  launch(s, list, kernel, event, nullptr);
  return ZE_RESULT_SUCCESS;
}
