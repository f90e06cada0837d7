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
// host-function threads. Gates are created, and buffers released, under one
// lock: a release never runs while a gate is being created, so no gate can
// appear between the check that none is unset and the release.
class DeferredReleases {
 public:
  // Creates a user event of `context` that commands will wait for; it
  // counts as unset until gate_set. Returns NULL with *rc set on failure
  // (then nothing is counted).
  cl_event create_gate(const ClApi& api, cl_context context, cl_int* rc) {
    std::lock_guard lock(mutex_);
    cl_event gate = api.clCreateUserEvent(context, rc);
    if (*rc == CL_SUCCESS) ++unset_;
    return gate;
  }
  // A gate's status was set (the caller set it first): releases what was
  // held back once none is unset.
  void gate_set(const ClApi& api) {
    std::lock_guard lock(mutex_);
    if (unset_ > 0) --unset_;
    if (unset_ == 0) release_held_locked(api);
  }
  // Releases `mem` now, or when the last unset gate is set. Returns
  // clReleaseMemObject's code (`mem` is not released when it fails),
  // CL_SUCCESS when held back.
  cl_int release(const ClApi& api, cl_mem mem) {
    std::lock_guard lock(mutex_);
    if (unset_ > 0) {
      held_.push_back(mem);
      return CL_SUCCESS;
    }
    return api.clReleaseMemObject(mem);
  }
  // Releases everything held back (instance shutdown, after its queues
  // finished).
  void release_all(const ClApi& api) {
    std::lock_guard lock(mutex_);
    release_held_locked(api);
  }

 private:
  void release_held_locked(const ClApi& api) {
    for (cl_mem m : held_) api.clReleaseMemObject(m);
    held_.clear();
  }

  std::mutex mutex_;
  size_t unset_ = 0;           // gates created and not yet set
  std::vector<cl_mem> held_;   // releases held back meanwhile
};

}  // namespace xal::opencl
