// State of the simulated HIP runtime: devices whose memory is host memory,
// streams that run each operation when it is enqueued (so in order), events
// stamped with the host clock, sticky errors and injected faults.
#pragma once

#ifndef __HIP_PLATFORM_AMD__
#define __HIP_PLATFORM_AMD__ 1
#endif
#include <hip/hip_runtime_api.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
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

// Locks the simulator and applies injected faults and sticky errors.
#define SIM_BEGIN(name, device_call)                               \
  xalsim::State& s = xalsim::state();                              \
  std::unique_lock lock(s.mutex);                                  \
  if (int code = xalsim::enter(s, name, device_call); code != 0) { \
    return static_cast<hipError_t>(code);                          \
  }

// A stream's work runs on its own worker thread, in order.
struct ihipStream_t {
  int device = 0;
  std::unique_ptr<xalsim::Worker> worker = std::make_unique<xalsim::Worker>();
};
// recorded: how many records were enqueued; completed: how many ran.
struct ihipEvent_t {
  int device = 0;
  bool timing = true;
  std::atomic<uint64_t> recorded{0};
  std::atomic<uint64_t> completed{0};
  std::atomic<int64_t> when_ns{0};
};
struct ihipModuleSymbol_t {
  std::string name;
};
struct ihipModule_t {
  int device = 0;
  std::vector<std::unique_ptr<ihipModuleSymbol_t>> functions;
};

namespace xalsim {

struct Device {
  size_t total = 0;
  size_t used = 0;
  int sticky = 0;  // hipError_t that the device keeps returning
  std::set<int> peers;
};

// A hipMalloc allocation (shareable memory, xalsim/shared_memory.h), or
// another process's allocation mapped by hipIpcOpenMemHandle (`ipc`).
struct Allocation {
  Block data;
  size_t size = 0;
  int device = 0;
  bool ipc = false;
};

struct State {
  std::mutex mutex;
  std::vector<Device> devices;
  std::map<uintptr_t, Allocation> allocations;  // by base address
  std::map<void*, std::unique_ptr<std::byte[]>> host_allocations;
  std::set<void*> registered;
  std::map<ihipStream_t*, std::unique_ptr<ihipStream_t>> streams;
  std::map<ihipEvent_t*, std::shared_ptr<ihipEvent_t>> events;
  // Signalled whenever an event completes.
  std::mutex event_mutex;
  std::condition_variable event_done;
  std::map<ihipModule_t*, std::unique_ptr<ihipModule_t>> modules;
  // hipModuleUnload calls not refused by XALSIM_HIP_FAIL
  // (xalsim_hip_module_unloads).
  int module_unloads = 0;
  FaultPlan faults;
  bool initialised = false;
  // XALSIM_HIP_PARTITIONS: devices per card (an MI300 in CPX/DPX mode);
  // the devices of one card share its PCI address.
  int partitions = 1;
};

State& state();
int& current_device();

// Reads XALSIM_HIP_DEVICES (default 2), XALSIM_HIP_MEMORY (bytes, default
// 1 GiB) and XALSIM_HIP_PARTITIONS (default 1) and rebuilds the devices if
// their number changed.
void configure(State& s);

// Injected fault for `function`, else the current device's sticky error
// (when `device_call`), else 0. Marks the device on a sticky code.
int enter(State& s, const char* function, bool device_call);

// True when [address, address + bytes) lies inside one live allocation
// (of `device` when device >= 0).
bool in_allocation(State& s, const void* address, size_t bytes, int device);

bool is_sticky(int code);

}  // namespace xalsim
