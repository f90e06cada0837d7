// A grow-only page-locked host buffer for collective staging. A buffer that
// is outgrown is kept (retired) until the owner goes away, because work
// already queued on a stream may still use it.
// Not thread-safe: one owner (a rank's communicator) uses it.
#pragma once

#include <cstddef>
#include <vector>

namespace xal::core {

class HostMemory;

class StagingBuffer {
 public:
  explicit StagingBuffer(HostMemory& host) : host_(host) {}
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  // A buffer of at least `bytes`; nullptr with the error detail set when
  // host memory is exhausted.
  void* get(size_t bytes);

 private:
  HostMemory& host_;
  void* current_ = nullptr;
  size_t bytes_ = 0;
  std::vector<void*> retired_;
};

}  // namespace xal::core
