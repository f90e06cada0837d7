// Device: one simulated card of a mock instance: its profile, its memory
// arena, and the streams, events and modules created on it.
// Thread-safe: every member may be called from any thread.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "arena.h"
#include "event.h"
#include "foreign_memory.h"
#include "kernels.h"
#include "metrics.h"
#include "profiles.h"
#include "stream_worker.h"

namespace xal::mock {

class Backend;

class Device {
 public:
  // Reserves the arena. Throws std::system_error when it cannot.
  Device(Backend& backend, uint32_t index, Profile profile);
  // Drains and joins every stream before the arena goes away.
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  Backend& backend() const { return backend_; }
  uint32_t index() const { return index_; }
  const Profile& profile() const { return profile_; }
  Arena& arena() { return arena_; }
  BusyTracker& busy() { return busy_; }

  void fill_properties(xal_device_properties_t& out) const;
  void fill_metrics(xal_device_metrics_t& out) const;

  // Memory the device uses but does not own (imports, IPC mappings).
  ForeignMemory& foreign() { return foreign_; }

  // Host address of [ptr, ptr+bytes) if it lies in this device's memory
  // (its arena, or foreign memory whose owner is alive), else nullptr.
  void* host_address(xal_devptr_t ptr, size_t bytes) const;
  // Same, but throws Error(OUT_OF_BOUNDS) naming `what`.
  void* checked_address(xal_devptr_t ptr, size_t bytes, const char* what) const;

  // Objects owned by the device; create throws std::bad_alloc. destroy
  // returns false when the object is not one of this device's.
  Stream* create_stream(uint32_t flags);
  bool destroy_stream(Stream* stream);  // drains it first
  // Adds a holder to a live stream of this device (xal_stream_import): the
  // stream then survives one more destroy_stream. False when `stream` is
  // not one of this device's.
  bool import_stream(Stream* stream);
  Event* create_event(uint32_t flags);
  bool destroy_event(Event* event);
  Module* load_module(std::string_view image);
  bool unload_module(Module* module);

  // Waits for every stream; returns the first queued-work error.
  xal_status_t synchronize(std::string* out_message);
  // Vendor-style reset: drains the streams, drops every allocation, forgets
  // event records and the utilization history. Handles stay safe to use.
  void reset();

 private:
  std::vector<std::shared_ptr<Stream>> stream_snapshot() const;

  Backend& backend_;
  const uint32_t index_;
  const Profile profile_;
  const std::chrono::steady_clock::time_point created_;
  Arena arena_;
  BusyTracker busy_;
  mutable std::mutex mutex_;
  std::map<Stream*, std::shared_ptr<Stream>> streams_;
  std::map<Stream*, uint32_t> stream_imports_;  // extra holders
  ForeignMemory foreign_;
  std::map<Event*, std::unique_ptr<Event>> events_;
  std::map<Module*, std::unique_ptr<Module>> modules_;
};

}  // namespace xal::mock
