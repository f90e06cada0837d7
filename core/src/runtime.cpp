// Runtime object, common checks.
#include "runtime.hpp"

#include <chrono>
#include <thread>

#include "host_memory.hpp"
#include "peer_copy.hpp"
#include "xal_common/strings.hpp"

namespace xal::core {

std::atomic<Runtime*> g_runtime{nullptr};

namespace {
std::atomic<uint64_t> g_epochs{0};

// Holds (RuntimeHold) count in g_holds[g_hold_phase]. xal_shutdown flips the
// phase after unpublishing and waits for the old phase's counter only: holds
// taken meanwhile count in the new one and see no runtime, so a steady
// stream of handle-free calls cannot keep shutdown waiting. All seq_cst: a
// hold that saw the runtime incremented its counter before shutdown's
// unpublish, so shutdown's wait sees it.
std::atomic<uint32_t> g_hold_phase{0};
std::atomic<uint64_t> g_holds[2];
}  // namespace

Runtime::Runtime() : epoch(g_epochs.fetch_add(1, std::memory_order_relaxed) + 1) {}
Runtime::~Runtime() = default;

RuntimeHold::RuntimeHold() noexcept {
  for (;;) {
    phase_ = g_hold_phase.load() & 1;
    g_holds[phase_].fetch_add(1);
    rt_ = g_runtime.load();
    // A phase read before a shutdown and a runtime read after the next
    // xal_init would count against the wrong shutdown: take it again.
    if (!rt_ || (g_hold_phase.load() & 1) == phase_) return;
    g_holds[phase_].fetch_sub(1, std::memory_order_release);
  }
}

RuntimeHold::~RuntimeHold() { g_holds[phase_].fetch_sub(1, std::memory_order_release); }

void publish_runtime(Runtime* rt) noexcept { g_runtime.store(rt); }

Runtime* unpublish_runtime() noexcept {
  Runtime* rt = g_runtime.exchange(nullptr);
  const uint32_t old = g_hold_phase.load() & 1;  // only changed here, under xal_init's lock
  g_hold_phase.store(old ^ 1);
  // A hold lasts one short call: yield, then sleep, until the last one on
  // the old runtime is released.
  for (unsigned spins = 0; g_holds[old].load() != 0; ++spins) {
    if (spins < 1000)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return rt;
}

xal_status_t not_initialized() {
  return fail(XAL_ERROR_NOT_INITIALIZED,
              cat("xal is not initialised: call xal_init first (",
                  t_operation, ")"));
}

xal_status_t bad_handle(const void* handle, const char* what) {
  if (!runtime()) return not_initialized();
  if (!handle) return fail(XAL_ERROR_INVALID_HANDLE, cat(what, " is NULL"));
  return fail(XAL_ERROR_INVALID_HANDLE,
              cat(what, " ", handle,
                  " is not a live handle of that kind (destroyed, freed by "
                  "xal_shutdown, or another kind of object)"));
}

xal_status_t null_argument(const char* what) {
  return fail(XAL_ERROR_INVALID_ARGUMENT, cat(what, " is NULL"));
}

xal_status_t bad_struct(const void* p, size_t struct_size, size_t needed,
                        const char* what) {
  if (!p) return null_argument(what);
  return fail(XAL_ERROR_INVALID_ARGUMENT,
              cat(what, "->struct_size is ", struct_size,
                  ", smaller than the ", needed,
                  " bytes of its first version (set it to sizeof)"));
}

namespace {

// "it lies in an allocation of device N (backend)" when `ptr` is inside a
// live allocation of another device; empty otherwise. Caller holds
// rt->partition_mu.
std::string owner_elsewhere(const Runtime* rt, const DeviceObj* device, uint64_t ptr) {
  for (DeviceObj* other : rt->devices) {
    Registry::Range unused;
    if (other != device && other->state->registry.contains(ptr, 1, &unused))
      return cat("it lies in an allocation of device ", other->index, " (",
                 other->backend->name, "), not of this device");
  }
  return {};
}

// Why [ptr, +bytes) is not inside a live allocation of `device`, given the
// allocation `near` at or below ptr (size 0: none). Caller holds
// rt->partition_mu.
std::string why_outside(const Runtime* rt, const DeviceObj* device, uint64_t ptr, uint64_t bytes,
                        const Registry::Range& near) {
  if (std::string other = owner_elsewhere(rt, device, ptr); !other.empty()) return other;
  if (near.size == 0) return "no allocation of the device lies at or below it";
  if (ptr - near.base < near.size)
    return cat("it runs past the end of the allocation ", hex(near.base), " of ", near.size,
               " bytes by ", bytes - (near.base + near.size - ptr), " bytes");
  return cat("it is not inside a live allocation (nearest below: ", hex(near.base), " of ",
             near.size, " bytes; freed memory or a pointer of another device)");
}

}  // namespace

xal_status_t check_range(Runtime* rt, DeviceObj* device, uint64_t ptr,
                         uint64_t bytes, const char* what) {
  if (!rt->validation) return XAL_SUCCESS;
  Registry::Range near;
  if (device->state->registry.contains(ptr, bytes, &near)) return XAL_SUCCESS;
  // The message walks the device list and reads indices, which
  // xal_device_partition / unpartition on any card change: under their lock
  // (an error path, where the lock costs nothing that matters).
  std::string message;
  {
    std::lock_guard lock(rt->partition_mu);
    message = cat(what, " range [", hex(ptr), ", +", bytes, " bytes) on device ", device->index,
                  " (", device->backend->name, "): ", why_outside(rt, device, ptr, bytes, near));
  }
  return fail(device, XAL_ERROR_OUT_OF_BOUNDS, message);
}

}  // namespace xal::core
