// testdev: a small host-memory backend used by the core's unit tests.
// Devices are plain host memory; streams run work inline, or on a worker
// thread per stream when XAL_TESTDEV_ASYNC=1. Configuration (environment,
// read through services->get_config):
//   XAL_TESTDEV_DEVICES      number of devices (default 2)
//   XAL_TESTDEV_MEMORY       bytes per device (default 1 GiB)
//   XAL_TESTDEV_ASYNC        1: streams run on worker threads
//   XAL_TESTDEV_NO_HOST_PTR  1: no device_ptr_to_host entry behaviour
//   XAL_TESTDEV_FAIL_DTOH    NAME:N: the Nth memcpy_dtoh (from 1) of the
//                            instance loaded as NAME (testdev, testdev2)
//                            fails with XAL_ERROR_BACKEND (fault injection)
//   XAL_TESTDEV_HTOD_DELAY_MS  each memcpy_htod on an asynchronous stream
//                            waits this long before it copies
// Built in several variants (TESTDEV_VARIANT) to test the loader.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "xal/xal_backend.h"

namespace testdev {

struct Backend;

struct Device {
  Backend* backend = nullptr;
  uint32_t index = 0;
  uint64_t capacity = 0;
  std::mutex mu;
  uint64_t used = 0;
  std::map<uint64_t, std::pair<std::unique_ptr<std::byte[]>, uint64_t>> blocks;
};

struct Stream {
  Device* device = nullptr;
  bool async = false;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> queue;
  bool busy = false;
  bool stop = false;
  std::thread worker;

  void enqueue(std::function<void()> fn);
  void synchronize();
  bool idle();
  ~Stream();
};

struct Event {
  Device* device = nullptr;
  std::mutex mu;
  std::condition_variable cv;
  bool done = true;
  bool recorded = false;
  double time_ms = 0;
  void wait();
};

struct Backend {
  const xal_backend_services_t* services = nullptr;
  std::string name;
  bool async = false;
  bool host_ptr = true;
  uint64_t fail_dtoh = 0;           // XAL_TESTDEV_FAIL_DTOH for this instance (0: none)
  std::atomic<uint64_t> dtohs{0};   // memcpy_dtoh calls so far
  uint64_t htod_delay_ms = 0;       // XAL_TESTDEV_HTOD_DELAY_MS
  bool fail_copies = false;         // XAL_TESTDEV_FAIL_COPIES names this instance
  std::vector<std::unique_ptr<Device>> devices;
  std::mutex mu;
  std::map<void*, size_t> registered;  // host_register
  std::string loaded_name, loaded_path;  // probe: what load_backend gave
  std::vector<std::string> plans;        // probe: fault plans received
};

// Sets the error detail through the core's services.
xal_status_t error(Backend* b, xal_status_t status, int64_t code,
                   const char* name, const std::string& message);

// Fills the optional module and collective entries.
void fill_extras(xal_backend_table_t& t);

// probe variant: a fault control extension that records what it is given.
const void* probe_extension(xal_backend_t* backend, const char* name);

}  // namespace testdev

template <class T, class U>
inline T* as(U* p) {
  return reinterpret_cast<T*>(p);
}
