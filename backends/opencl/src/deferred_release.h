// Buffer releases held back while a user event is unset: per
// clSetUserEventStatus, while commands wait for a user event whose status is
// not set, releasing any OpenCL object other than an event is undefined.
// Host-function gates and cross-platform wait bridges are such user events.
#pragma once

#include "dynamic_symbols.h"

#include <cstddef>
#include <mutex>
#include <vector>

namespace xal::opencl {

// One per backend instance. Thread-safe; callable from OpenCL callbacks and
// host-function threads.
class DeferredReleases {
 public:
  // A user event was created that commands will wait for.
  void gate_created() {
    std::lock_guard lock(mutex_);
    ++unset_;
  }
  // Its status was set: releases what was held back once none is unset.
  void gate_set(const ClApi& api) {
    std::vector<cl_mem> now;
    {
      std::lock_guard lock(mutex_);
      if (unset_ > 0) --unset_;
      if (unset_ == 0) now.swap(held_);
    }
    for (cl_mem m : now) api.clReleaseMemObject(m);
  }
  // Releases `mem` now, or when the last unset user event is set. Returns
  // clReleaseMemObject's code, CL_SUCCESS when held back.
  cl_int release(const ClApi& api, cl_mem mem) {
    {
      std::lock_guard lock(mutex_);
      if (unset_ > 0) {
        held_.push_back(mem);
        return CL_SUCCESS;
      }
    }
    return api.clReleaseMemObject(mem);
  }
  // Releases everything held back (instance shutdown, after its queues
  // finished).
  void release_all(const ClApi& api) {
    std::vector<cl_mem> now;
    {
      std::lock_guard lock(mutex_);
      now.swap(held_);
    }
    for (cl_mem m : now) api.clReleaseMemObject(m);
  }

 private:
  std::mutex mutex_;
  size_t unset_ = 0;           // user events created and not yet set
  std::vector<cl_mem> held_;   // releases held back meanwhile
};

}  // namespace xal::opencl
