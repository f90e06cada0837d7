// State of the simulated Level Zero driver: one driver (or two, each with
// every other root device, with XALSIM_ZE_DRIVERS=2) whose devices'
// memory is host memory, immediate command lists that run their commands on
// a worker (in order when created with ZE_COMMAND_QUEUE_FLAG_IN_ORDER),
// events stamped with a device timer, a device-lost state, Sysman readings
// from a fixed model, injected faults; optionally an NPU driver
// (XALSIM_ZE_NPU).
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/zes_api.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "xalsim/fault_plan.h"
#include "xalsim/shared_memory.h"
#include "xalsim/worker.h"

#define SIM_EXPORT extern "C" __attribute__((visibility("default")))

// Locks the simulator and applies injected faults and the lost state.
#define SIM_BEGIN(name, device_call)                               \
  xalsim::State& s = xalsim::state();                              \
  std::unique_lock lock(s.mutex);                                  \
  if (int code = xalsim::enter(s, name, device_call); code != 0) { \
    return static_cast<ze_result_t>(code);                         \
  }

struct _ze_driver_handle_t {};
struct _ze_device_handle_t {
  int index = 0;        // position in State::devices
  int driver = 0;       // position in State::drivers (kNpuDriver: the NPU's)
  int root = -1;        // parent index for a sub-device
  bool npu = false;     // the NPU of XALSIM_ZE_NPU (ZE_DEVICE_TYPE_VPU)
  std::vector<ze_device_handle_t> subs;
};
struct _ze_context_handle_t {
  int driver = 0;  // position in State::drivers
};
// An immediate command list runs its commands on its own worker. Without
// the in-order flag (or on a driver that ignores it) commands other than
// barriers and waits are held in `deferred` until the next barrier, wait or
// destroy, then run in reverse order: the most adverse order an unordered
// list may run them in. `deferred` is guarded by State::mutex.
struct _ze_command_list_handle_t {
  ze_device_handle_t device = nullptr;
  ze_context_handle_t context = nullptr;
  bool in_order = false;
  // zeCommandListCreate makes a regular list, which the simulator only
  // creates, describes and destroys (it has no command queues).
  bool immediate = true;
  std::vector<std::function<void()>> deferred;
  std::unique_ptr<xalsim::Worker> worker = std::make_unique<xalsim::Worker>();
};
struct _ze_event_pool_handle_t {
  ze_event_pool_flags_t flags = 0;
  uint32_t count = 0;
  // The devices given at creation (empty: every device of the driver); a
  // list of another device may not wait on its events.
  std::vector<ze_device_handle_t> devices;
};
struct _ze_event_handle_t {
  ze_event_pool_handle_t pool = nullptr;
  std::atomic<bool> signaled{false};
  std::atomic<uint64_t> timestamp{0};
  // Queued commands that signal or wait on it and have not run yet: the
  // spec forbids destroying it meanwhile (XALSIM_ZE_STRICT_EVENTS).
  std::atomic<int> queued{0};
};
struct _ze_module_build_log_handle_t {
  std::string text;
};
struct _ze_module_handle_t {
  ze_device_handle_t device = nullptr;
  std::vector<std::string> kernels;
  // Queued launches of its kernels that have not run yet: the spec forbids
  // destroying it meanwhile (XALSIM_ZE_STRICT_EVENTS).
  std::atomic<int> queued{0};
};
struct _ze_kernel_handle_t {
  std::string name;
  std::vector<std::vector<unsigned char>> args;
  uint32_t group[3] = {1, 1, 1};
  std::shared_ptr<_ze_module_handle_t> module;  // kept alive by its kernels
  std::atomic<int> queued{0};  // queued launches not run yet
};
// Sysman handles: one kind each, naming their device.
struct _zes_mem_handle_t { int device = 0; };
struct _zes_pwr_handle_t { int device = 0; };
struct _zes_temp_handle_t { int device = 0; double celsius = 0; };
struct _zes_engine_handle_t { int device = 0; };
struct _zes_ras_handle_t { int device = 0; bool correctable = true; };
struct _zes_freq_handle_t { int device = 0; zes_freq_domain_t type{}; };

namespace xalsim {

// A USM allocation (device and shared ones in memory another process can
// map, xalsim/shared_memory.h), or another process's device allocation
// mapped by zeMemOpenIpcHandle (`ipc`).
struct Allocation {
  Block data;
  size_t size = 0;
  int device = -1;  // -1: host allocation
  ze_context_handle_t context = nullptr;
  ze_memory_type_t type = ZE_MEMORY_TYPE_HOST;
  bool ipc = false;
};

// The NPU driver's position in State::drivers.
inline constexpr int kNpuDriver = 2;

struct State {
  std::mutex mutex;
  _ze_driver_handle_t drivers[3];  // two GPU drivers, then the NPU's
  size_t driver_count = 1;         // GPU drivers
  // XALSIM_ZE_NPU: 0 none; 1 an NPU driver listed first unless zeInit asked
  // for ZE_INIT_FLAG_GPU_ONLY; 2 listed even then (a loader ignoring it).
  int npu = 0;
  bool gpu_only = false;  // zeInit's ZE_INIT_FLAG_GPU_ONLY
  // The API version the drivers report (XALSIM_ZE_API_VERSION, default
  // 1.7); below 1.7 ZE_COMMAND_QUEUE_FLAG_IN_ORDER is accepted and ignored.
  uint32_t api_version = ZE_MAKE_VERSION(1, 7);
  // XALSIM_ZE_RAS_SOFT: count of each non-hardware RAS category (engine
  // resets, programming and driver errors) in both error sets.
  uint64_t ras_soft = 0;
  std::vector<std::unique_ptr<_ze_device_handle_t>> devices;  // roots first
  size_t roots = 0;
  size_t memory = 0;
  size_t max_alloc = 0;  // maxMemAllocSize; larger needs relaxed limits
  std::vector<size_t> used;  // per device
  std::string configured;    // configuration text the devices came from
  bool initialised = false;
  bool lost = false;
  std::map<uintptr_t, Allocation> allocations;
  std::map<void*, std::shared_ptr<void>> objects;  // every other live object
  std::set<ze_event_handle_t> events;              // the live events among them
  std::vector<std::unique_ptr<_zes_mem_handle_t>> mems;
  std::vector<std::unique_ptr<_zes_pwr_handle_t>> pwrs;
  std::vector<std::unique_ptr<_zes_temp_handle_t>> temps;
  std::vector<std::unique_ptr<_zes_engine_handle_t>> engines;
  std::vector<std::unique_ptr<_zes_ras_handle_t>> ras;
  std::vector<std::unique_ptr<_zes_freq_handle_t>> freqs;
  FaultPlan faults;
  // Signalled whenever an event is signalled, and when the two below change.
  std::mutex event_mutex;
  std::condition_variable event_done;
  // While set, zeEventHostSynchronize waits (after its event) until it is
  // cleared; held_waits counts those waiting (xalsim_ze_hold_host_waits).
  bool hold_host_waits = false;
  int held_waits = 0;
  int host_waiting = 0;  // threads waiting in zeEventHostSynchronize
  uint64_t last_wait_timeout = 0;  // of the last zeEventHostSynchronize
  // Live contexts and command lists (xalsim_ze_live_objects), and events,
  // pools, kernels or modules destroyed while queued commands still used
  // them, counted with XALSIM_ZE_STRICT_EVENTS=1 (xalsim_ze_event_misuses).
  // Guarded by mutex.
  int live_contexts = 0;
  int live_lists = 0;
  int event_misuses = 0;
  // The device timer: its rate (XALSIM_ZE_TIMER_HZ, default 1 GHz) and, when
  // not 0, a fixed time in ns that events are stamped with instead of the
  // host clock (xalsim_ze_set_clock_ns). Read by the list workers.
  std::atomic<double> timer_hz{1e9};
  std::atomic<uint64_t> fixed_clock_ns{0};
};

State& state();

// Reads XALSIM_ZE_DEVICES (default 2), XALSIM_ZE_SUBDEVICES (default 0),
// XALSIM_ZE_DRIVERS (1 or 2, default 1), XALSIM_ZE_NPU, XALSIM_ZE_MEMORY
// (bytes, default 1 GiB), XALSIM_ZE_MAX_ALLOC (maxMemAllocSize, default the
// memory), XALSIM_ZE_API_VERSION ("1.6"), XALSIM_ZE_TIMER_HZ and
// XALSIM_ZE_RAS_SOFT; rebuilds the devices when they changed.
void configure(State& s);

// Injected fault for `function` (ZE_RESULT_ERROR_DEVICE_LOST sets the lost
// state), else DEVICE_LOST while lost for a `device_call`, else 0.
int enter(State& s, const char* function, bool device_call);

// Creates an object owned by the simulator; `live` checks a handle.
template <typename T>
T* make(State& s) {
  auto object = std::make_shared<T>();
  T* raw = object.get();
  s.objects[raw] = object;
  return raw;
}
inline bool live(State& s, const void* handle) {
  return handle != nullptr && s.objects.count(const_cast<void*>(handle)) == 1;
}
inline bool destroy(State& s, const void* handle) {
  return s.objects.erase(const_cast<void*>(handle)) == 1;
}
// A live object's shared owner, for work that outlives the call.
template <typename T>
std::shared_ptr<T> share(State& s, T* handle) {
  return std::static_pointer_cast<T>(s.objects.at(handle));
}

// The driver handle's position in State::drivers, or -1.
int driver_index(State& s, ze_driver_handle_t driver);
// Whether zeDriverGet lists the NPU driver.
bool npu_listed(const State& s);

// The allocation containing `pointer`, or nullptr.
Allocation* find(State& s, const void* pointer, uintptr_t* base = nullptr);

// A copy/fill operand: memory outside every allocation is host memory;
// memory inside one must fit [pointer, pointer + bytes) in it.
bool operand_ok(State& s, const void* pointer, size_t bytes);

uint64_t now_ns();
// The device timer now, in ticks of State::timer_hz. Thread-safe.
uint64_t timer_ticks(State& s);
bool env_flag(const char* name);

}  // namespace xalsim
