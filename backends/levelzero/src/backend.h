// The Level Zero backend's objects behind the plugin ABI's opaque handles.
//
// Each driver has one context shared by its devices, so that peer copies,
// host allocations and cross-device waits work directly. A lost device
// loses that context: ZE_RESULT_ERROR_DEVICE_LOST marks every device of the
// driver, and xal_device_reset on any of them recreates the context (and
// invalidates the objects of all of them). A reset of a healthy device
// releases only that device's objects. Host allocations (host_alloc) live
// in the driver's context too: a reset that replaces a context still
// holding some retires it instead of destroying it, and the last host_free
// in it destroys it, so that host memory outlives resets.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dynamic_symbols.h"
#include "xal/xal_backend.h"
#include "xalsupport/device_objects.h"
#include "xalsupport/ipc_owners.h"
#include "xalsupport/sticky_error.h"

struct xal_bstream_s;
struct xal_bevent_s;
struct xal_bmodule_s;

namespace xal::levelzero {

// One Level Zero driver and the context its devices share.
struct DriverState {
  ze_driver_handle_t handle = nullptr;
  uint32_t api_version = 0;  // zeDriverGetApiVersion (0 when it failed)
  std::mutex mutex;  // guards context, retired and the recreation
  ze_context_handle_t context = nullptr;
  // Contexts a reset replaced that still hold host allocations.
  std::vector<ze_context_handle_t> retired;
  std::vector<xal_bdevice_s*> devices;
};

// A host_alloc buffer: its driver and the context it was allocated in.
struct HostAllocation {
  DriverState* driver = nullptr;
  ze_context_handle_t context = nullptr;
};

// A native event in a pool of its own. Shared: the xal event holds the one
// its records use; a call that uses it (a host wait, an appended wait)
// holds it meanwhile. An event destroyed, or recorded again, while the
// device may still use its native event retires it to the device's
// `retired_events`, which destroys it once nothing refers to it any more
// (the Level Zero spec forbids destroying an event the device still uses).
struct NativeEvent {
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t handle = nullptr;
  uint64_t generation = 0;  // of its device, at creation
  std::atomic<bool> recorded{false};  // a barrier that signals it is appended
  std::mutex mutex;  // guards waiters
  // Streams that queued a wait on it; dropped once found past that wait.
  std::vector<std::weak_ptr<xal_bstream_s>> waiters;
};

// Last Sysman samples, for rates (power, utilisation), and the energy
// counter at init (energy is reported since then; left out without it).
struct SysmanSamples {
  bool have_energy = false;
  uint64_t energy_uj = 0;
  uint64_t energy_timestamp_us = 0;
  bool have_energy_start = false;
  uint64_t energy_at_start_uj = 0;
  bool have_activity = false;
  uint64_t active_us = 0;
  uint64_t activity_timestamp_us = 0;
};

}  // namespace xal::levelzero

struct xal_backend_s {
  xal::levelzero::ZeLibrary library;
  const xal_backend_services_t* services = nullptr;
  // Drivers with at least one GPU device; host memory lives in the first.
  std::vector<std::unique_ptr<xal::levelzero::DriverState>> drivers;
  std::vector<std::unique_ptr<xal_bdevice_s>> devices;
  std::string api_version;
  std::string skipped;  // drivers left out at init, and why (describe's note)
  uint64_t sync_timeout_ns = UINT64_MAX;
  // Guards host_allocations; taken before a DriverState's mutex.
  std::mutex host_mutex;
  std::unordered_map<void*, xal::levelzero::HostAllocation> host_allocations;
  // Host memory whose zeMemFree was refused: host_free released it all the
  // same (xal_backend.h), so it no longer keeps its context retired; the
  // free is tried again at each device reset and at shutdown, and a
  // context's own destruction releases what is left of it. Guarded by
  // host_mutex.
  std::vector<std::pair<void*, xal::levelzero::HostAllocation>> host_leftovers;

  const xal::levelzero::ZeApi& api() const { return library.api(); }
};

// Owned by its device's `streams` (shared: device_synchronize holds a
// reference while it fences, so that a concurrent stream_destroy cannot
// free it under it).
struct xal_bstream_s : std::enable_shared_from_this<xal_bstream_s> {
  xal_bdevice_s* device = nullptr;
  ze_command_list_handle_t list = nullptr;
  ze_event_pool_handle_t pool = nullptr;
  ze_event_handle_t sync_event = nullptr;  // signalled by synchronize/query
  bool explicit_order = false;  // no in-order flag: a barrier after each op
  // The caller's list, adopted by stream_import (never destroyed here): a
  // barrier before each op too, as its own work may precede xal's on a
  // list that is not in order.
  bool imported = false;
  uint64_t generation = 0;
  std::mutex mutex;  // guards the list's appends and the flags below
  bool fence_pending = false;  // a barrier signalling sync_event is queued
  bool dirty = false;          // work appended since the last fence
  bool released = false;       // stream_destroy released the native objects
  // Guarded by the device's mutex: a temporary stream (staged copies) whose
  // destroy was refused; device_synchronize destroys it once it fenced it.
  bool orphan = false;
};

// A re-record that finds its native event still in use by the device (its
// previous record pending, or a wait on it not yet passed) gives the event
// a fresh native event and retires the old one: waits queued on the
// earlier record keep waiting for it, and nothing blocks the host.
struct xal_bevent_s {
  xal_bdevice_s* device = nullptr;
  uint64_t generation = 0;
  bool timing = true;
  std::mutex mutex;  // guards native
  std::shared_ptr<xal::levelzero::NativeEvent> native;  // never null

  // The native event of the last record (or the first, unused one).
  std::shared_ptr<xal::levelzero::NativeEvent> current() {
    std::lock_guard lock(mutex);
    return native;
  }
};

struct xal_bkernel_s {
  ze_kernel_handle_t handle = nullptr;
  std::string name;
  std::mutex mutex;  // arguments and group size are set per launch
};

struct xal_bmodule_s {
  xal_bdevice_s* device = nullptr;
  ze_module_handle_t handle = nullptr;
  uint64_t generation = 0;
  std::mutex mutex;
  std::vector<std::unique_ptr<xal_bkernel_s>> kernels;
};

// A root device, or a sub-device when XAL_LEVELZERO_SUBDEVICES=1.
struct xal_bdevice_s {
  xal_backend_s* backend = nullptr;
  xal::levelzero::DriverState* driver = nullptr;
  ze_device_handle_t handle = nullptr;
  ze_device_handle_t root = nullptr;  // Sysman reads the root card
  uint32_t compute_ordinal = 0;
  ze_device_properties_t properties{};
  double ns_per_tick = 1.0;  // of kernel timestamps, from timerResolution
  uint64_t memory_bytes = 0;
  uint32_t memory_clock_mhz = 0;
  uint32_t memory_bus_width_bits = 0;
  uint32_t index = 0;

  std::mutex mutex;  // guards everything below
  xal::support::StickyError sticky;  // set on DEVICE_LOST, cleared by reset
  uint64_t generation = 0;
  struct Allocation {
    uint64_t generation;
    size_t bytes;
  };
  std::unordered_map<uint64_t, Allocation> allocations;
  uint64_t allocated_bytes = 0;
  std::unordered_map<xal_bstream_s*, std::shared_ptr<xal_bstream_s>> streams;
  xal::support::Objects<xal_bevent_s> events;
  // Native events the device may still use, of destroyed or re-recorded
  // events (see NativeEvent).
  std::vector<std::shared_ptr<xal::levelzero::NativeEvent>> retired_events;
  xal::support::Objects<xal_bmodule_s> modules;
  // Memory mem_ipc_open mapped: address -> the generation and context it
  // was opened in (one entry per open); a reset closes it.
  struct IpcMapping {
    uint64_t generation;
    ze_context_handle_t context;
  };
  std::unordered_multimap<uint64_t, IpcMapping> ipc_mappings;
  // Its exporters, for the copies' check (thread-safe on its own).
  xal::support::IpcOwners ipc_owners;
  xal::levelzero::SysmanSamples samples;

  ze_context_handle_t context() {
    std::lock_guard lock(driver->mutex);
    return driver->context;
  }
};
