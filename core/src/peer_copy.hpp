// Cross-backend work done by the core: staged peer copies through
// page-locked host buffers in pipelined chunks, and waits of a stream on an
// event of another backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime.hpp"

namespace xal::core {

class PeerEngine {
 public:
  static constexpr size_t kChunk = 8u << 20;  // bytes per staging buffer
  static constexpr int kBuffers = 2;

  explicit PeerEngine(Runtime& rt);
  ~PeerEngine();

  struct Job;
  // Runs `job` on a core thread. Thread-safe.
  void launch(std::shared_ptr<Job> job);
  // Waits for every launched job. Thread-safe.
  void drain() noexcept;

  // A set of staging buffers (kBuffers x kChunk); nullptr with the error
  // set when host memory is exhausted. Thread-safe.
  void** acquire_buffers();
  void release_buffers(void** buffers) noexcept;

 private:
  struct Worker {
    std::thread thread;
    std::shared_ptr<Job> job;
  };
  void reap() noexcept;

  Runtime& rt_;
  std::mutex mu_;
  std::vector<Worker> workers_;
  std::vector<std::unique_ptr<void*[]>> free_buffers_;
};

// xal_memcpy_peer between devices of two backends (or of a backend without
// memcpy_peer), ordered on `stream`.
xal_status_t staged_peer_copy(StreamObj* stream, DeviceObj* dst_device,
                              xal_devptr_t dst, DeviceObj* src_device,
                              xal_devptr_t src, size_t bytes);

// xal_stream_wait_event across backends.
xal_status_t cross_backend_wait(StreamObj* stream, EventObj* event);

// Destroys the native event behind `event` (whose handle is going away):
// now, or where cross-backend waits still hold it, when the last of them
// ends (the backend's status is then not known here: XAL_SUCCESS). When
// the backend refuses, the event is left as it was.
xal_status_t destroy_native_event(EventObj* event) noexcept;

}  // namespace xal::core
