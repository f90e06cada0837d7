// The HIP backend's objects behind the plugin ABI's opaque handles.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "dynamic_symbols.h"
#include "rccl_loader.h"
#include "metrics.h"
#include "xal/xal_backend.h"
#include "xalsupport/device_objects.h"
#include "xalsupport/ipc_owners.h"
#include "xalsupport/message_pairs.h"
#include "xalsupport/sticky_error.h"

struct xal_bstream_s;
struct xal_bevent_s;
struct xal_bmodule_s;

// One backend instance: the loaded runtime and its devices.
struct xal_backend_s {
  xal::hip::HipLibrary library;
  xal::hip::Rccl rccl;
  xal::hip::RocmSmi smi;
  const xal_backend_services_t* services = nullptr;
  std::vector<std::unique_ptr<xal_bdevice_s>> devices;
  int driver_version = 0;
  int runtime_version = 0;
  std::mutex peer_mutex;
  std::set<std::pair<int, int>> peers_enabled;  // (from, to) ordinals
  // Failures of queued work the runtime's streams cannot carry (a send and
  // receive that disagree, comm.cpp), for the streams' next synchronize.
  xal::support::StreamFailures stream_failures;

  const xal::hip::HipApi& api() const { return library.api(); }
};

struct xal_bstream_s {
  xal_bdevice_s* device = nullptr;
  hipStream_t handle = nullptr;
  uint64_t generation = 0;
  // Adopted by stream_import: the caller's stream, never destroyed here.
  bool imported = false;
};

struct xal_bevent_s {
  xal_bdevice_s* device = nullptr;
  hipEvent_t handle = nullptr;
  uint64_t generation = 0;
  bool timing = true;
  std::atomic<bool> recorded{false};  // set by event_record, read by any thread
};

struct xal_bkernel_s {
  hipFunction_t handle = nullptr;
  std::string name;
};

struct xal_bmodule_s {
  xal_bdevice_s* device = nullptr;
  hipModule_t handle = nullptr;
  uint64_t generation = 0;
  std::mutex mutex;
  std::vector<std::unique_ptr<xal_bkernel_s>> kernels;
};

// A HIP device (ordinal). Its mutex guards everything below it.
struct xal_bdevice_s {
  xal_backend_s* backend = nullptr;
  int ordinal = 0;
  // Its rocm-smi device (-1: none) and energy counter at init, in uJ
  // (energy is reported since then). Set at init, read-only after.
  int smi_index = -1;
  bool energy_start_valid = false;
  double energy_start_uj = 0.0;

  std::mutex mutex;
  // Sticky error: set by a sticky HIP code, cleared by device_reset.
  xal::support::StickyError sticky;
  // Bumped by device_reset: objects of an older generation are invalid.
  uint64_t generation = 0;
  std::unordered_map<uint64_t, uint64_t> allocations;  // address -> generation
  // Memory mem_ipc_open mapped: address -> generation (one entry per open).
  std::unordered_multimap<uint64_t, uint64_t> ipc_mappings;
  // Its exporters, for the copies' check (thread-safe on its own).
  xal::support::IpcOwners ipc_owners;
  // The device owns its streams, events and modules; the key is the
  // handle given to the core.
  xal::support::Objects<xal_bstream_s> streams;
  xal::support::Objects<xal_bevent_s> events;
  xal::support::Objects<xal_bmodule_s> modules;
};

namespace xal::hip {

// device.cpp: an attribute of the device (0 when it cannot be read) and
// its PCI address ("0000:65:00.0", "" when it cannot be read), for init and
// the properties.
int attribute(xal_bdevice_s* device, hipDeviceAttribute_t which);
std::string pci_bus_id(xal_bdevice_s* device);

}  // namespace xal::hip
