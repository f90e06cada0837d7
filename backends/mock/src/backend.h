// Backend: one instance of the mock plugin (init may make several). Owns
// its devices and the page-locked host buffers handed out through it; no
// state is shared between instances but their ordinals (InstanceOrdinal).
// Thread-safe after construction.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "copy_engine.h"
#include "device.h"
#include "xal/xal_backend.h"

namespace xal::mock {

// Default XAL_MOCK_COMPUTE_SCALE: a card of T TFLOPS multiplies matrices at
// T x 1e-6 TFLOPS (an H100 profile at 0.99 GFLOP/s, an A100 at 0.31), below
// what one core of a host computes, so that the pace, not the host, sets
// each card's speed.
inline constexpr double kDefaultComputeScale = 1e-6;

// The instance's ordinal among the live instances of this process: the
// lowest one free when it was made, given back when it goes. The first (or
// only) instance of every process is 0, so its devices keep the same ids in
// every process (the shared quota ledger counts on that); a second live
// instance (XAL_BACKENDS=mock,mock, or the fault backend's own) gets ids of
// its own. Thread-safe.
class InstanceOrdinal {
 public:
  InstanceOrdinal();
  ~InstanceOrdinal();
  InstanceOrdinal(const InstanceOrdinal&) = delete;
  InstanceOrdinal& operator=(const InstanceOrdinal&) = delete;
  uint32_t value() const { return value_; }

 private:
  uint32_t value_;
};

class Backend {
 public:
  // Builds the devices of `profiles`. Throws std::system_error when an
  // arena cannot be reserved.
  struct CopySettings {
    // Copies from this many bytes up run on oneTBB (XAL_MOCK_PARALLEL_COPY).
    size_t parallel_threshold = kDefaultParallelThreshold;
    // Unthrottled copies up to this size run on the caller's thread when
    // their stream is idle (XAL_MOCK_INLINE_COPY); 0: never.
    size_t inline_limit = kDefaultInlineLimit;
  };

  // `spec` describes where the profiles came from (for describe()).
  // `compute_scale` (XAL_MOCK_COMPUTE_SCALE) multiplies every profile's
  // tflops_fp16 to give the pace of gemm_f32; 0: unpaced.
  Backend(const xal_backend_services_t* services, std::vector<Profile> profiles,
          std::string spec, CopySettings copies,
          double compute_scale = kDefaultComputeScale);
  // Drains every stream of every device, then frees everything.
  ~Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  const xal_backend_services_t* services() const { return services_; }
  uint32_t device_count() const { return static_cast<uint32_t>(devices_.size()); }
  Device& device(uint32_t index) { return *devices_[index]; }
  bool owns(const Device* device) const;
  const std::string& spec() const { return spec_; }
  uint32_t ordinal() const { return ordinal_.value(); }
  const CopySettings& copies() const { return copies_; }
  double compute_scale() const { return compute_scale_; }

  // Page-aligned host memory, locked with mlock when the limit allows.
  void* host_alloc(size_t bytes);
  bool host_free(void* ptr);
  void host_register(void* ptr, size_t bytes);
  bool host_unregister(void* ptr);

 private:
  const xal_backend_services_t* services_;
  const std::string spec_;
  const CopySettings copies_;
  const double compute_scale_;
  const InstanceOrdinal ordinal_;  // before the devices, which read it
  std::vector<std::unique_ptr<Device>> devices_;
  std::mutex host_mutex_;
  std::map<void*, size_t> host_allocations_;  // ptr -> mapped length
  std::map<void*, size_t> host_registered_;
};

}  // namespace xal::mock
