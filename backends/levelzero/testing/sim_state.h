// State of the simulated Level Zero driver: one driver (or two, each with
// every other root device, with XALSIM_ZE_DRIVERS=2) whose devices'
// memory is host memory, immediate command lists that run each command when
// it is appended (so in order), events stamped with the host clock, a
// device-lost state, Sysman readings from a fixed model, injected faults.
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/zes_api.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "xalsim/fault_plan.h"
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
  int driver = 0;       // position in State::drivers
  int root = -1;        // parent index for a sub-device
  std::vector<ze_device_handle_t> subs;
};
struct _ze_context_handle_t {};
// An immediate command list runs its commands in order on its own worker.
struct _ze_command_list_handle_t {
  ze_device_handle_t device = nullptr;
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
struct _ze_kernel_handle_t {
  std::string name;
  std::vector<std::vector<unsigned char>> args;
  uint32_t group[3] = {1, 1, 1};
};
struct _ze_module_handle_t {
  ze_device_handle_t device = nullptr;
  std::vector<std::string> kernels;
};
// Sysman handles: one kind each, naming their device.
struct _zes_mem_handle_t { int device = 0; };
struct _zes_pwr_handle_t { int device = 0; };
struct _zes_temp_handle_t { int device = 0; double celsius = 0; };
struct _zes_engine_handle_t { int device = 0; };
struct _zes_ras_handle_t { int device = 0; bool correctable = true; };
struct _zes_freq_handle_t { int device = 0; zes_freq_domain_t type{}; };

namespace xalsim {

struct Allocation {
  std::unique_ptr<std::byte[]> data;
  size_t size = 0;
  int device = -1;  // -1: host allocation
  ze_context_handle_t context = nullptr;
};

struct State {
  std::mutex mutex;
  _ze_driver_handle_t drivers[2];
  size_t driver_count = 1;
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
  // Live contexts and command lists (xalsim_ze_live_objects), and events
  // or pools destroyed while queued commands still used them, counted with
  // XALSIM_ZE_STRICT_EVENTS=1 (xalsim_ze_event_misuses). Guarded by mutex.
  int live_contexts = 0;
  int live_lists = 0;
  int event_misuses = 0;
};

State& state();

// Reads XALSIM_ZE_DEVICES (default 2), XALSIM_ZE_SUBDEVICES (default 0),
// XALSIM_ZE_DRIVERS (1 or 2, default 1), XALSIM_ZE_MEMORY (bytes, default
// 1 GiB) and XALSIM_ZE_MAX_ALLOC (maxMemAllocSize, default the memory);
// rebuilds the devices when they changed.
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

// The allocation containing `pointer`, or nullptr.
Allocation* find(State& s, const void* pointer, uintptr_t* base = nullptr);

// A copy/fill operand: memory outside every allocation is host memory;
// memory inside one must fit [pointer, pointer + bytes) in it.
bool operand_ok(State& s, const void* pointer, size_t bytes);

uint64_t now_ns();
bool env_flag(const char* name);

}  // namespace xalsim
