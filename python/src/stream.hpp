// Streams and events: owned handles, destroyed by close() or when Python
// drops them (xal_stream_destroy waits for the stream's work first).
#pragma once

#include "handles.hpp"

namespace xalpy {

class Stream : public Owned {
 public:
  Stream(Device device, xal_stream_t handle, bool imported)
      : Owned(device.gen), device_(device), handle_(handle), imported_(imported) {}
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  void close();
  // The handle of a live stream (raises for a closed or stale one).
  xal_stream_t get(const char* operation) const {
    check(operation);
    return handle_;
  }
  const Device& device() const { return device_; }
  bool imported() const { return imported_; }

 private:
  Device device_;
  xal_stream_t handle_;
  bool imported_;
};

class Event : public Owned {
 public:
  Event(Device device, xal_event_t handle) : Owned(device.gen), device_(device), handle_(handle) {}
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  void close();
  xal_event_t get(const char* operation) const {
    check(operation);
    return handle_;
  }
  const Device& device() const { return device_; }

 private:
  Device device_;
  xal_event_t handle_;
};

void bind_stream(nb::module_& m);

}  // namespace xalpy
