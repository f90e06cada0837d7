// The objects behind the public handles, and the loaded-backend record.
// Each handle object begins with a HandleHeader (the backend's table first).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "handles.hpp"
#include "registry.hpp"
#include "xal/xal.h"
#include "xal/xal_backend.h"

namespace xal::core {

class CommImpl;

// One backend considered by xal_init (loaded or not).
struct Backend {
  std::string name;      // display name ("fault(mock)")
  std::string short_name;// table name ("fault")
  std::string argument;  // init argument ("mock" for fault:mock)
  std::string version, path, reason, driver_version;
  std::string note;  // the backend's describe() note
  uint32_t state = XAL_BACKEND_STATE_FAILED;
  xal_status_t status = XAL_ERROR_INTERNAL;
  uint32_t abi_version = 0;
  uint32_t flags = 0;
  uint32_t device_count = 0;
  void* dl = nullptr;  // dlopen handle, closed at shutdown
  // The plugin's table copied into a full-size, zero-filled table, so that
  // entries past the plugin's struct_size read as NULL.
  std::unique_ptr<xal_backend_table_t> table;
  xal_backend_t* instance = nullptr;

  bool loaded() const { return state == XAL_BACKEND_STATE_LOADED; }
};

struct Counters {
  std::atomic<uint64_t> bytes_htod{0}, bytes_dtoh{0}, bytes_dtod{0},
      bytes_peer{0}, collective_calls{0}, collective_bytes{0},
      alloc_bytes_current{0}, alloc_bytes_peak{0}, alloc_count_current{0};
  std::atomic<uint64_t> errors[XAL_STATUS_COUNT] = {};
};

struct StreamObj;
struct EventObj;
struct ModuleObj;
struct PartitionInfo;
class ComputeShare;

// Per-device state the core keeps (registry, quota, counters, children).
struct DeviceState {
  Registry registry;
  std::atomic<uint64_t> limit{0};     // quota in bytes, 0: none
  std::atomic<uint64_t> reserved{0};  // bytes allocated through xal
  std::atomic<int> ledger_slot{-2};   // XAL_QUOTA_LEDGER slot, -2: not looked up
  Counters counters;
  std::mutex mu;  // guards the sets below and staging_stream
  std::unordered_set<StreamObj*> streams;
  std::unordered_set<EventObj*> events;
  std::unordered_set<ModuleObj*> modules;
  xal_bstream_t* staging_stream = nullptr;  // core-owned, for peer staging
  // Partitions (partition.hpp). On a partition: what it is, and its compute
  // share (null on whole cards: one branch per submit). On a card split into
  // partitions: `partitioned` is set and the card refuses work.
  std::shared_ptr<PartitionInfo> partition;
  ComputeShare* share = nullptr;  // owned by `partition`, or card_time
  // A whole card's device-time meter while the shared ledger is on
  // (XAL_QUOTA_LEDGER): a share of 100% that never throttles, so that the
  // job's usage has device time on whole cards too (quota_shared.cpp).
  std::shared_ptr<ComputeShare> card_time;
  std::atomic<bool> partitioned{false};
  // How often xal_device_reset (of the device or of its card) released its
  // allocations, streams and events; named in the errors of stale pointers.
  std::atomic<uint32_t> resets{0};
  // Ranges of the registry that xal does not own (ABI 1.1 interop): memory
  // imported with xal_mem_import (ipc false) or mapped from another
  // process's IPC handle (ipc true), by base address. Released through the
  // backend's mem_import_release / mem_ipc_close instead of mem_free.
  struct Foreign {
    uint64_t bytes = 0;
    bool ipc = false;
  };
  std::mutex foreign_mu;
  std::map<uint64_t, Foreign> foreign;
};

}  // namespace xal::core

struct xal_device_s {
  static constexpr xal::core::Kind kKind = xal::core::Kind::kDevice;
  xal::core::HandleHeader hdr;
  xal::core::Backend* backend = nullptr;
  xal_bdevice_t* native = nullptr;
  uint32_t index = 0;          // global
  uint32_t backend_index = 0;  // within its backend
  std::unique_ptr<xal::core::DeviceState> state;
};

namespace xal::core {

using DeviceObj = ::xal_device_s;

struct StreamObj {
  static constexpr Kind kKind = Kind::kStream;
  HandleHeader hdr;
  DeviceObj* device = nullptr;
  xal_bstream_t* native = nullptr;
};

// An event's native event while host functions on other backends' streams
// wait on it (cross_backend_wait): the last of its holders destroys it.
struct SharedNativeEvent {
  SharedNativeEvent(const xal_backend_table_t* t, xal_bevent_t* e) : table(t), native(e) {}
  ~SharedNativeEvent() {
    if (native) table->event_destroy(native);
  }
  SharedNativeEvent(const SharedNativeEvent&) = delete;  // one owner of `native`
  SharedNativeEvent& operator=(const SharedNativeEvent&) = delete;

  const xal_backend_table_t* table;
  xal_bevent_t* native;  // null once destroyed by its handle's owner
};

struct EventObj {
  static constexpr Kind kKind = Kind::kEvent;
  HandleHeader hdr;
  DeviceObj* device = nullptr;
  xal_bevent_t* native = nullptr;
  // Set by the first cross-backend wait; guarded by the device state's mu.
  std::shared_ptr<SharedNativeEvent> shared;
};

struct KernelObj;

struct ModuleObj {
  static constexpr Kind kKind = Kind::kModule;
  HandleHeader hdr;
  DeviceObj* device = nullptr;
  xal_bmodule_t* native = nullptr;
  std::mutex mu;
  std::vector<KernelObj*> kernels;  // live as long as the module
};

struct KernelObj {
  static constexpr Kind kKind = Kind::kKernel;
  HandleHeader hdr;
  ModuleObj* module = nullptr;
  xal_bkernel_t* native = nullptr;
  std::string name;
};

struct CommObj {
  static constexpr Kind kKind = Kind::kComm;
  HandleHeader hdr;
  DeviceObj* device = nullptr;
  uint32_t rank = 0;
  uint32_t size = 0;
  uint32_t timeout_ms = 0;
  std::unique_ptr<CommImpl> impl;
};

// Casts for the public handle types.
inline DeviceObj* as_device(xal_device_t h) noexcept {
  return handle_cast<DeviceObj>(h);
}
inline StreamObj* as_stream(xal_stream_t h) noexcept {
  return handle_cast<StreamObj>(h);
}
inline EventObj* as_event(xal_event_t h) noexcept {
  return handle_cast<EventObj>(h);
}
inline ModuleObj* as_module(xal_module_t h) noexcept {
  return handle_cast<ModuleObj>(h);
}
inline KernelObj* as_kernel(xal_kernel_t h) noexcept {
  return handle_cast<KernelObj>(h);
}
inline CommObj* as_comm(xal_comm_t h) noexcept {
  return handle_cast<CommObj>(h);
}

}  // namespace xal::core
