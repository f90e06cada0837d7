// Device (device.h) and the device entries (entries.h).
#include "device.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "backend.h"
#include "entries.h"
#include "errors.h"
#include "xal_common/strings.hpp"

namespace xal::mock {

namespace {

uint64_t fnv1a(std::string_view text, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

constexpr uint64_t kCapabilities =
    XAL_DEVICE_CAP_SIMULATED | XAL_DEVICE_CAP_PEER_COPY |
    XAL_DEVICE_CAP_EVENT_TIMING | XAL_DEVICE_CAP_HOST_MEMORY |
    XAL_DEVICE_CAP_RESET | XAL_DEVICE_CAP_KERNELS | XAL_DEVICE_CAP_METRICS |
    XAL_DEVICE_CAP_COLLECTIVES | XAL_DEVICE_CAP_MEM_IMPORT |
    XAL_DEVICE_CAP_STREAM_IMPORT | XAL_DEVICE_CAP_HOST_POINTERS;

}  // namespace

Device::Device(Backend& backend, uint32_t index, Profile profile)
    : backend_(backend), index_(index), profile_(std::move(profile)),
      created_(std::chrono::steady_clock::now()),
      arena_(profile_.memory_bytes) {}

Device::~Device() {
  // Streams first: their workers may still touch the arena.
  std::map<Stream*, std::shared_ptr<Stream>> streams;
  {
    std::lock_guard lock(mutex_);
    streams.swap(streams_);
  }
  streams.clear();
}

void Device::fill_properties(xal_device_properties_t& out) const {
  common::copy_string(out.name, "Mock " + profile_.name);
  common::copy_string(out.vendor, profile_.vendor);
  out.kind = profile_.kind;
  // The first instance of the process keeps the plain id (the same in
  // every process); a later live instance adds its ordinal, and takes it as
  // its PCI domain.
  const uint32_t ordinal = backend_.ordinal();
  std::string id = profile_.key + "#" + std::to_string(index_);
  if (ordinal > 0) id += "@" + std::to_string(ordinal);
  const uint64_t h1 = fnv1a(id, 14695981039346656037ull);
  const uint64_t h2 = fnv1a(id + "/xal-mock", h1);
  for (int i = 0; i < 8; ++i) {
    out.uuid[i] = static_cast<uint8_t>(h1 >> (8 * i));
    out.uuid[8 + i] = static_cast<uint8_t>(h2 >> (8 * i));
  }
  out.uuid[6] = static_cast<uint8_t>((out.uuid[6] & 0x0f) | 0x50);  // name-based
  out.uuid[8] = static_cast<uint8_t>((out.uuid[8] & 0x3f) | 0x80);  // RFC 4122
  char pci[32];
  std::snprintf(pci, sizeof pci, "%04x:%02x:00.0", ordinal & 0xffff, (0x10 + index_) & 0xff);
  common::copy_string(out.pci_bus_id, pci);
  out.memory_bytes = arena_.capacity();
  out.compute_units = profile_.compute_units;
  out.core_clock_mhz = profile_.core_clock_mhz;
  out.memory_clock_mhz = profile_.memory_clock_mhz;
  out.memory_bus_width_bits = profile_.memory_bus_width_bits;
  out.peak_memory_bandwidth_gbps = profile_.peak_memory_bandwidth_gbps;
  out.capabilities = kCapabilities | (arena_.fd() >= 0 ? XAL_DEVICE_CAP_IPC : 0);
  out.max_allocation_bytes = arena_.capacity();
}

void Device::fill_metrics(xal_device_metrics_t& out) const {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point now = Clock::now();
  double busy = busy_.busy_in_window(now);
  const Clock::time_point from = now - kUtilizationWindow;
  for (const auto& stream : stream_snapshot()) {
    Clock::time_point since;
    if (stream->running_since(&since))
      busy += std::chrono::duration<double>(now - std::max(since, from)).count();
  }
  const double window = std::chrono::duration<double>(kUtilizationWindow).count();
  const double utilization = std::clamp(busy / window, 0.0, 1.0);
  const PowerModel model{profile_.idle_w, profile_.tdp_w};
  const double power = model.power(utilization);
  const double age = std::chrono::duration<double>(now - created_).count();
  const double busy_total = std::min(busy_.total_busy_seconds(now), age);

  out.utilization_percent = utilization * 100.0;
  out.memory_used_bytes = arena_.used();
  out.memory_total_bytes = arena_.capacity();
  out.temperature_c = model.temperature(power);
  out.power_w = power;
  out.energy_j = profile_.idle_w * age + (profile_.tdp_w - profile_.idle_w) * busy_total;
  out.sm_clock_mhz = profile_.core_clock_mhz;
  out.memory_clock_mhz = profile_.memory_clock_mhz;
  out.ecc_corrected = 0;
  out.ecc_uncorrected = 0;
  out.health = XAL_HEALTH_OK;
  out.valid |= XAL_METRIC_UTILIZATION | XAL_METRIC_MEMORY_USED |
               XAL_METRIC_MEMORY_TOTAL | XAL_METRIC_TEMPERATURE |
               XAL_METRIC_POWER | XAL_METRIC_ENERGY | XAL_METRIC_SM_CLOCK |
               XAL_METRIC_MEMORY_CLOCK | XAL_METRIC_ECC_CORRECTED |
               XAL_METRIC_ECC_UNCORRECTED | XAL_METRIC_HEALTH |
               XAL_METRIC_SIMULATED;
}

void* Device::host_address(xal_devptr_t ptr, size_t bytes) const {
  if (arena_.contains(ptr, bytes)) return reinterpret_cast<void*>(ptr);
  const auto hit = foreign_.find(ptr, bytes);
  if (!hit || hit->owner_gone) return nullptr;
  return reinterpret_cast<void*>(ptr);
}

void* Device::checked_address(xal_devptr_t ptr, size_t bytes,
                              const char* what) const {
  void* host = host_address(ptr, bytes);
  if (!host) {
    if (const auto hit = foreign_.find(ptr, bytes); hit && hit->owner_gone)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  std::string(what) + " range [" + hex(ptr) + ", +" + std::to_string(bytes) +
                      ") is IPC memory of process " + std::to_string(hit->owner_pid) +
                      ", which has ended: close it with xal_mem_close_ipc_handle");
  }
  if (!host)
    throw Error(XAL_ERROR_OUT_OF_BOUNDS,
                std::string(what) + " range [" + hex(ptr) + ", +" +
                    std::to_string(bytes) + ") is not inside the memory of mock device " +
                    std::to_string(index_) + " [" + hex(arena_.base()) + ", +" +
                    std::to_string(arena_.capacity()) + ")");
  return host;
}

std::vector<std::shared_ptr<Stream>> Device::stream_snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<Stream>> out;
  out.reserve(streams_.size());
  for (const auto& [raw, stream] : streams_) out.push_back(stream);
  return out;
}

Stream* Device::create_stream(uint32_t flags) {
  auto stream = std::make_shared<Stream>(*this, flags, busy_);
  Stream* raw = stream.get();
  std::lock_guard lock(mutex_);
  streams_.emplace(raw, std::move(stream));
  return raw;
}

bool Device::import_stream(Stream* stream) {
  std::lock_guard lock(mutex_);
  if (streams_.find(stream) == streams_.end()) return false;
  ++stream_imports_[stream];
  return true;
}

bool Device::destroy_stream(Stream* stream) {
  std::shared_ptr<Stream> owned;
  {
    std::lock_guard lock(mutex_);
    auto it = streams_.find(stream);
    if (it == streams_.end()) return false;
    if (auto held = stream_imports_.find(stream); held != stream_imports_.end()) {
      // Another holder remains: this destroy only lets go.
      if (--held->second == 0) stream_imports_.erase(held);
      return true;
    }
    owned = std::move(it->second);
    streams_.erase(it);
  }
  // Outside the lock. Other threads (device synchronize, metrics, reset)
  // may hold references from stream_snapshot(), so the last reset need not
  // be ours: drain here, so that the work is done when destroy returns.
  owned->drain();
  owned.reset();  // joins the worker, or leaves that to the last holder
  return true;
}

Event* Device::create_event(uint32_t flags) {
  auto event = std::make_unique<Event>(*this, flags);
  Event* raw = event.get();
  std::lock_guard lock(mutex_);
  events_.emplace(raw, std::move(event));
  return raw;
}

bool Device::destroy_event(Event* event) {
  std::lock_guard lock(mutex_);
  return events_.erase(event) == 1;
}

Module* Device::load_module(std::string_view image) {
  auto module = std::make_unique<Module>(*this, image);
  Module* raw = module.get();
  std::lock_guard lock(mutex_);
  modules_.emplace(raw, std::move(module));
  return raw;
}

bool Device::unload_module(Module* module) {
  std::lock_guard lock(mutex_);
  return modules_.erase(module) == 1;
}

xal_status_t Device::synchronize(std::string* out_message) {
  xal_status_t first = XAL_SUCCESS;
  for (const auto& stream : stream_snapshot()) {
    std::string message;
    const xal_status_t s = stream->synchronize(&message);
    if (s != XAL_SUCCESS && first == XAL_SUCCESS) {
      first = s;
      if (out_message) *out_message = std::move(message);
    }
  }
  return first;
}

void Device::reset() {
  for (const auto& stream : stream_snapshot()) stream->synchronize(nullptr);
  arena_.reset();
  std::lock_guard lock(mutex_);
  for (auto& [raw, event] : events_) event->reset();
  busy_.clear();
}

// Entries (entries.h).

xal_status_t device_get_properties(xal_bdevice_t* device, xal_device_properties_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "device_get_properties", [&] {
    check_out_struct(out, "device_get_properties: out_properties");
    d.fill_properties(*out);
    return XAL_SUCCESS;
  });
}

xal_status_t device_synchronize(xal_bdevice_t* device) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "device_synchronize", [&] {
    std::string message;
    const xal_status_t s = d.synchronize(&message);
    if (s != XAL_SUCCESS) throw Error(s, message);
    return XAL_SUCCESS;
  });
}

xal_status_t device_reset(xal_bdevice_t* device) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "device_reset", [&] {
    d.reset();
    return XAL_SUCCESS;
  });
}

xal_status_t device_get_health(xal_bdevice_t* device, xal_device_health_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "device_get_health", [&] {
    check_out_struct(out, "device_get_health: out_health");
    out->state = XAL_HEALTH_OK;
    out->sticky_status = XAL_SUCCESS;
    out->vendor_code = 0;
    common::copy_string(out->message, "simulated device: healthy");
    return XAL_SUCCESS;
  });
}

// Accepts the struct from its first public version on (ABI 1.0 ended
// before the job fields, as the core's xal_device_get_metrics takes it) and
// writes nothing past the caller's struct_size.
xal_status_t device_get_metrics(xal_bdevice_t* device, xal_device_metrics_t* out) {
  XAL_MOCK_REQUIRE_HANDLE(device);
  Device& d = *as_device(device);
  return guarded(Entry{services_of(&d)}, "device_get_metrics", [&] {
    constexpr size_t kFirstSize = XAL_DEVICE_METRICS_SIZE_1_0;
    check_not_null(out, "device_get_metrics: out_metrics");
    if (out->struct_size < kFirstSize)
      throw Error(XAL_ERROR_INVALID_ARGUMENT,
                  "device_get_metrics: out_metrics->struct_size is " +
                      std::to_string(out->struct_size) + ", expected at least " +
                      std::to_string(kFirstSize));
    // Filled in a full copy that starts as the caller's fields, so that
    // what the caller's struct holds and the mock does not set stays.
    const size_t size = std::min(out->struct_size, sizeof(xal_device_metrics_t));
    xal_device_metrics_t m{};
    std::memcpy(&m, out, size);
    d.fill_metrics(m);
    std::memcpy(out, &m, size);
    return XAL_SUCCESS;
  });
}

void* device_ptr_to_host(xal_bdevice_t* device, xal_devptr_t ptr, size_t bytes) {
  if (!device) return nullptr;
  return as_device(device)->host_address(ptr, bytes);
}

}  // namespace xal::mock
