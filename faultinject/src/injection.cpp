// The injection path of the fault backend: sticky and pending errors,
// the actions of a firing rule, bit flips in outputs, reset and health.
#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include "backend.hpp"
#include "profiles.hpp"
#include "xal_common/strings.hpp"

namespace xal::fault {
namespace {
std::string error_text(const ErrorSpec& e) {
  std::string out = status_to_name(e.status);
  if (!e.vendor_name.empty() || e.vendor_code != 0) {
    out += " (" + (e.vendor_name.empty() ? std::string("vendor code")
                                         : e.vendor_name) +
           " " + std::to_string(e.vendor_code) + ")";
  }
  return out;
}

struct FlipJob {
  uint8_t* host;
  std::vector<BitFlip> flips;
  static void run(void* user) {
    std::unique_ptr<FlipJob> job(static_cast<FlipJob*>(user));
    for (const auto& f : job->flips) job->host[f.offset] ^= f.mask;
  }
};

}  // namespace

void FaultBackend::set_sticky(FaultDevice* dev, const ErrorSpec& e,
                              const std::string& message) {
  std::lock_guard lock(dev->state.mutex);
  if (dev->state.sticky.load()) return;  // the first sticky error stays
  dev->state.sticky_error = e;
  dev->state.sticky_message = message;
  dev->state.sticky.store(true, std::memory_order_release);
}

xal_status_t FaultBackend::sticky_error(FaultDevice* dev, Op op) {
  std::lock_guard lock(dev->state.mutex);
  const ErrorSpec& e = dev->state.sticky_error;
  return report(e.status,
                "fault: " + std::string(op_name(op)) + " on device " +
                    std::to_string(dev->index) + " refused: the device has " +
                    "a sticky error " + error_text(e) +
                    " until xal_device_reset (" + dev->state.sticky_message +
                    ")",
                e.vendor_code, e.vendor_name);
}

xal_status_t FaultBackend::before(Op op, FaultDevice* dev, FaultDevice* dev2,
                                  std::optional<uint64_t> bytes,
                                  uint64_t output_bytes,
                                  std::optional<Decision>* flip,
                                  const CommCall* comm,
                                  const FaultStream* stream) {
  if (!op_passes_sticky(op)) {
    for (FaultDevice* d : {dev, dev2}) {
      if (d != nullptr && d->state.sticky.load(std::memory_order_acquire)) {
        engine.note_call();
        return sticky_error(d, op);
      }
    }
  }
  if (dev != nullptr && op_is_sync(op) &&
      dev->state.pending.load(std::memory_order_acquire)) {
    ErrorSpec e;
    std::string message;
    bool taken = false;  // by this thread: another may have taken it first
    {
      std::lock_guard lock(dev->state.mutex);
      const FaultStream* bound = dev->state.pending_stream;
      if (dev->state.pending.load(std::memory_order_acquire) &&
          (op == Op::device_synchronize || bound == nullptr || bound == stream)) {
        e = dev->state.pending_error;
        message = dev->state.pending_message;
        dev->state.pending_stream = nullptr;
        dev->state.pending.store(false, std::memory_order_release);
        taken = true;
      }
    }
    if (taken) return report_pending(dev, op, e, message);
  }
  auto d = engine.decide(op, dev != nullptr ? dev->index : -1, bytes,
                         output_bytes);
  if (!d) return XAL_SUCCESS;
  return inject(*d, op, dev, bytes, flip, comm, stream);
}

xal_status_t FaultBackend::before_devices(Op op,
                                          std::span<FaultDevice* const> devs) {
  if (!op_passes_sticky(op)) {
    for (FaultDevice* d : devs) {
      if (d->state.sticky.load(std::memory_order_acquire)) {
        engine.note_call();
        return sticky_error(d, op);
      }
    }
  }
  std::vector<int64_t> indices;
  indices.reserve(devs.size());
  for (FaultDevice* d : devs) indices.push_back(d->index);
  auto d = engine.decide(op, indices, std::nullopt, 0);
  if (!d) return XAL_SUCCESS;
  FaultDevice* dev =
      d->device >= 0 ? devices.at(static_cast<size_t>(d->device)).get() : nullptr;
  return inject(*d, op, dev, std::nullopt, nullptr, nullptr, nullptr);
}

xal_status_t FaultBackend::report_pending(FaultDevice* dev, Op op,
                                          const ErrorSpec& e,
                                          const std::string& message) {
  engine.note_call();
  if (e.sticky) set_sticky(dev, e, message);
  return report(e.status,
                "fault: asynchronous error reported at " +
                    std::string(op_name(op)) + ": " + message,
                e.vendor_code, e.vendor_name);
}

xal_status_t FaultBackend::inject(Decision& d, Op op, FaultDevice* dev,
                                  std::optional<uint64_t> bytes,
                                  std::optional<Decision>* flip,
                                  const CommCall* comm,
                                  const FaultStream* stream) {
  // A hang counts as active from here until its report is made, so that
  // stop() does not let the backend go while this thread still uses it.
  std::optional<ActiveHang> active;
  if (d.action == Action::hang) {
    active.emplace(*this);
    if (d.timeout_ms == 0) {  // neither the rule's nor its plan's
      d.timeout_ms = comm != nullptr && comm->timeout_ms > 0
                         ? comm->timeout_ms
                         : default_timeout_ms;
    }
  }
  if (dev != nullptr) dev->state.injected.fetch_add(1);
  log.write(d, op_name(op), dev != nullptr ? dev->index : -1, bytes,
            engine.elapsed_ms(), display_name);
  const std::string where =
      std::string(op_name(op)) +
      (dev != nullptr ? " on device " + std::to_string(dev->index) : "") +
      " by rule '" + d.rule_name + "' (call " + std::to_string(d.call) + ")";
  switch (d.action) {
    case Action::delay:
      std::this_thread::sleep_for(std::chrono::milliseconds(d.delay_ms));
      return XAL_SUCCESS;
    case Action::bitflip:
      if (flip != nullptr) *flip = std::move(d);
      return XAL_SUCCESS;
    case Action::hang:
      return hang(d, op, dev, comm);
    case Action::abort_process:
      std::abort();
    case Action::async_error:
      if (dev != nullptr) {
        std::lock_guard lock(dev->state.mutex);
        if (!dev->state.pending.load()) {
          dev->state.pending_error = d.error;
          dev->state.pending_message = "injected " + error_text(d.error) +
                                       " into " + where;
          dev->state.pending_stream = stream;
          dev->state.pending.store(true, std::memory_order_release);
        }
        return XAL_SUCCESS;
      }
      break;  // no device to defer to: report now
    case Action::error:
    case Action::device_lost:
      break;
  }
  const std::string message = "injected " + error_text(d.error) + " into " + where;
  if (d.error.sticky && dev != nullptr) set_sticky(dev, d.error, message);
  return report(d.error.status, "fault: " + message, d.error.vendor_code,
                d.error.vendor_name);
}

FaultBackend::ActiveHang::ActiveHang(FaultBackend& b) : backend_(b) {
  std::lock_guard lock(backend_.hang_mutex_);
  ++backend_.active_hangs_;
}

FaultBackend::ActiveHang::~ActiveHang() {
  std::lock_guard lock(backend_.hang_mutex_);
  --backend_.active_hangs_;
  backend_.hang_cv_.notify_all();  // under the lock: stop() may free it next
}

xal_status_t FaultBackend::hang(const Decision& d, Op op, FaultDevice* dev,
                                const CommCall* comm) {
  const uint64_t timeout_ms = d.timeout_ms;
  std::unique_lock lock(hang_mutex_);
  const bool woken = hang_cv_.wait_for(
      lock, std::chrono::milliseconds(timeout_ms), [&] {
        return stopping_ ||
               (comm != nullptr && comm->group != nullptr &&
                comm->group->aborts.load(std::memory_order_acquire) !=
                    comm->aborts_seen);
      });
  lock.unlock();
  const std::string where =
      std::string(op_name(op)) +
      (dev != nullptr ? " on device " + std::to_string(dev->index) : "") +
      " by rule '" + d.rule_name + "' (call " + std::to_string(d.call) + ")";
  if (woken) {
    return report(XAL_ERROR_ABORTED,
                  "fault: injected hang in " + where + " was aborted");
  }
  return report(d.error.status,
                "fault: injected hang in " + where + " timed out after " +
                    std::to_string(timeout_ms) + " ms",
                d.error.vendor_code, d.error.vendor_name);
}

void FaultBackend::flip_output(FaultStream* stream, FaultDevice* dev,
                               xal_devptr_t dptr, void* host, uint64_t bytes,
                               const Decision& d) {
  if (bytes == 0 || d.flips.empty()) return;
  if (host == nullptr && t.device_ptr_to_host != nullptr) {
    host = t.device_ptr_to_host(dev->target, dptr, bytes);
  }
  if (host != nullptr) {
    auto job = std::make_unique<FlipJob>(
        FlipJob{static_cast<uint8_t*>(host), d.flips});
    if (in_stream_order(stream->target, &FlipJob::run, job.get())) {
      (void)job.release();  // FlipJob::run frees it (or has freed it)
    }
    return;
  }
  if (dev == stream->device && t.stream_enqueue_host_func != nullptr &&
      queue_staged_flip(stream, dptr, bytes, d)) {
    return;
  }
  // Device memory the host cannot see, without host functions (or on
  // another device than the stream's): copy out, flip, copy back, on a
  // stream of the output's device, after the call's stream has finished.
  if (t.stream_synchronize(stream->target) != XAL_SUCCESS) return;
  xal_bstream_t* s = nullptr;
  if (t.stream_create(dev->target, 0, &s) != XAL_SUCCESS) return;
  std::vector<uint8_t> buffer(bytes);
  if (t.memcpy_dtoh(s, buffer.data(), dptr, bytes) == XAL_SUCCESS &&
      t.stream_synchronize(s) == XAL_SUCCESS) {
    for (const auto& f : d.flips) buffer[f.offset] ^= f.mask;
    if (t.memcpy_htod(s, dptr, buffer.data(), bytes) == XAL_SUCCESS) {
      t.stream_synchronize(s);
    }
  }
  t.stream_destroy(s);
}

bool FaultBackend::in_stream_order(xal_bstream_t* stream, void (*fn)(void*),
                                   void* user) {
  if (t.stream_enqueue_host_func != nullptr &&
      t.stream_enqueue_host_func(stream, fn, user) == XAL_SUCCESS) {
    return true;
  }
  if (t.stream_synchronize(stream) != XAL_SUCCESS) return false;
  fn(user);
  return true;
}

void FaultBackend::FlipStaging::flip(void* user) {
  auto* job = static_cast<FlipStaging*>(user);
  for (const auto& f : job->flips) job->host[f.offset] ^= f.mask;
}

void FaultBackend::FlipStaging::finish(void* user) {
  static_cast<FlipStaging*>(user)->done.store(true, std::memory_order_release);
}

bool FaultBackend::queue_staged_flip(FaultStream* stream, xal_devptr_t dptr,
                                     uint64_t bytes, const Decision& d) {
  free_staging(false);
  auto job = std::make_unique<FlipStaging>();
  job->device = stream->device;
  job->flips = d.flips;
  if (t.host_alloc != nullptr && t.host_free != nullptr) {
    // Page-locked, so that the target's copies do not wait.
    void* p = nullptr;
    if (t.host_alloc(target, bytes, 0, &p) != XAL_SUCCESS) return false;
    job->host = static_cast<uint8_t*>(p);
  } else {
    job->owned = std::make_unique<uint8_t[]>(bytes);
    job->host = job->owned.get();
  }
  xal_bstream_t* s = stream->target;
  if (t.memcpy_dtoh(s, job->host, dptr, bytes) != XAL_SUCCESS) {
    if (!job->owned) t.host_free(target, job->host);
    return false;
  }
  // From here the stream may use the buffer until `done` (never set when
  // the stream fails: the buffer then waits for shutdown).
  if (in_stream_order(s, &FlipStaging::flip, job.get())) {
    (void)t.memcpy_htod(s, dptr, job->host, bytes);  // failed: no flip
  }
  (void)in_stream_order(s, &FlipStaging::finish, job.get());
  std::lock_guard lock(staging_mutex_);
  staging_.push_back(std::move(job));
  return true;
}

void FaultBackend::free_staging(bool all) {
  std::vector<std::unique_ptr<FlipStaging>> ready;
  {
    std::lock_guard lock(staging_mutex_);
    const auto first_ready =
        all ? staging_.begin()
            : std::partition(staging_.begin(), staging_.end(), [](const auto& job) {
                return !job->done.load(std::memory_order_acquire);
              });
    std::move(first_ready, staging_.end(), std::back_inserter(ready));
    staging_.erase(first_ready, staging_.end());
  }
  for (auto& job : ready) {
    // At shutdown: a flip still queued (or dropped by a device reset)
    // must not find its buffer gone.
    if (!job->done.load(std::memory_order_acquire)) {
      (void)t.device_synchronize(job->device->target);
    }
    if (!job->owned) (void)t.host_free(target, job->host);
  }
}

void FaultBackend::unbind_pending(FaultStream* stream) {
  DeviceState& state = stream->device->state;
  std::lock_guard lock(state.mutex);
  if (state.pending_stream == stream) state.pending_stream = nullptr;
}

xal_status_t FaultBackend::reset_device(FaultDevice* dev) {
  {
    std::lock_guard lock(dev->state.mutex);
    dev->state.sticky.store(false, std::memory_order_release);
    dev->state.pending.store(false, std::memory_order_release);
    dev->state.sticky_message.clear();
    dev->state.pending_message.clear();
    dev->state.pending_stream = nullptr;
  }
  // Without a target reset (none, or it failed) the target's objects live
  // on: their wrappers stay usable and their destroys still reach it.
  if (t.device_reset == nullptr) return XAL_SUCCESS;  // our state is clear
  const xal_status_t reset = t.device_reset(dev->target);
  if (reset != XAL_SUCCESS) return reset;
  streams.for_each([&](FaultStream& s) {
    if (s.device == dev) s.dead.store(true);
  });
  events.for_each([&](FaultEvent& e) {
    if (e.device == dev) e.dead.store(true);
  });
  modules.for_each([&](FaultModule& m) {
    if (m.device == dev) m.dead.store(true);
  });
  // Communicators outlive a reset, aborted, until destroyed (xal_backend.h,
  // device_reset): their calls still reach the target.
  return XAL_SUCCESS;
}

xal_status_t FaultBackend::health(FaultDevice* dev, xal_device_health_t* out) {
  if (dev->state.sticky.load(std::memory_order_acquire)) {
    std::lock_guard lock(dev->state.mutex);
    const ErrorSpec& e = dev->state.sticky_error;
    out->state = e.status == XAL_ERROR_DEVICE_LOST ? XAL_HEALTH_LOST
                                                   : XAL_HEALTH_ERROR;
    out->sticky_status = e.status;
    out->vendor_code = e.vendor_code;
    common::copy_string(out->message, "fault: " + error_text(e) + ": " +
                                          dev->state.sticky_message);
    return XAL_SUCCESS;
  }
  if (t.device_get_health != nullptr) {
    return t.device_get_health(dev->target, out);
  }
  out->state = XAL_HEALTH_OK;
  out->sticky_status = XAL_SUCCESS;
  out->vendor_code = 0;
  out->message[0] = '\0';
  return XAL_SUCCESS;
}

}  // namespace xal::fault
