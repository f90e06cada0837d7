#include "sim_state.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace xalsim {

State& state() {
  static State instance;
  return instance;
}

bool env_flag(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::string(value) == "1";
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

uint64_t timer_ticks(State& s) {
  const uint64_t fixed = s.fixed_clock_ns.load();
  const uint64_t ns = fixed != 0 ? fixed : now_ns();
  // long double: exact for the test's fixed times, close enough otherwise.
  return static_cast<uint64_t>(static_cast<long double>(ns) * s.timer_hz.load() / 1e9L);
}

bool npu_listed(const State& s) { return s.npu == 2 || (s.npu == 1 && !s.gpu_only); }

void configure(State& s) {
  auto number = [](const char* name, unsigned long long fallback) {
    const char* text = std::getenv(name);
    return text != nullptr ? std::strtoull(text, nullptr, 10) : fallback;
  };
  const size_t roots = number("XALSIM_ZE_DEVICES", 2);
  const size_t subs = number("XALSIM_ZE_SUBDEVICES", 0);
  s.memory = number("XALSIM_ZE_MEMORY", 1ull << 30);
  s.max_alloc = number("XALSIM_ZE_MAX_ALLOC", s.memory);
  const size_t drivers = number("XALSIM_ZE_DRIVERS", 1) >= 2 ? 2 : 1;
  s.npu = static_cast<int>(number("XALSIM_ZE_NPU", 0));
  const char* version = std::getenv("XALSIM_ZE_API_VERSION");
  unsigned major = 1, minor = 7;
  if (version != nullptr) (void)std::sscanf(version, "%u.%u", &major, &minor);
  s.api_version = ZE_MAKE_VERSION(major, minor);
  s.timer_hz = static_cast<double>(number("XALSIM_ZE_TIMER_HZ", 1000000000));
  s.ras_soft = number("XALSIM_ZE_RAS_SOFT", 0);
  const std::string text = std::to_string(roots) + "/" + std::to_string(subs) + "/" +
                           std::to_string(drivers) + "/" + std::to_string(s.npu);
  s.initialised = true;
  if (text == s.configured) return;
  s.configured = text;
  s.devices.clear();
  s.mems.clear();
  s.pwrs.clear();
  s.temps.clear();
  s.engines.clear();
  s.ras.clear();
  s.freqs.clear();
  s.roots = roots;
  s.driver_count = drivers;
  for (size_t i = 0; i < roots; ++i) {
    auto device = std::make_unique<_ze_device_handle_t>();
    device->index = static_cast<int>(i);
    device->driver = static_cast<int>(i % drivers);
    s.devices.push_back(std::move(device));
  }
  for (size_t r = 0; r < roots; ++r) {
    for (size_t j = 0; j < subs; ++j) {
      auto device = std::make_unique<_ze_device_handle_t>();
      device->index = static_cast<int>(s.devices.size());
      device->root = static_cast<int>(r);
      device->driver = s.devices[r]->driver;
      s.devices[r]->subs.push_back(device.get());
      s.devices.push_back(std::move(device));
    }
  }
  if (s.npu != 0) {
    auto device = std::make_unique<_ze_device_handle_t>();
    device->index = static_cast<int>(s.devices.size());
    device->driver = kNpuDriver;
    device->npu = true;
    s.devices.push_back(std::move(device));
  }
  s.used.assign(s.devices.size(), 0);
  for (size_t i = 0; i < s.devices.size(); ++i) {
    const int d = static_cast<int>(i);
    s.mems.push_back(std::make_unique<_zes_mem_handle_t>(_zes_mem_handle_t{d}));
    s.pwrs.push_back(std::make_unique<_zes_pwr_handle_t>(_zes_pwr_handle_t{d}));
    s.temps.push_back(std::make_unique<_zes_temp_handle_t>(_zes_temp_handle_t{d, 45.0}));
    s.temps.push_back(std::make_unique<_zes_temp_handle_t>(_zes_temp_handle_t{d, 52.5}));
    s.engines.push_back(std::make_unique<_zes_engine_handle_t>(_zes_engine_handle_t{d}));
    s.ras.push_back(std::make_unique<_zes_ras_handle_t>(_zes_ras_handle_t{d, true}));
    s.ras.push_back(std::make_unique<_zes_ras_handle_t>(_zes_ras_handle_t{d, false}));
    s.freqs.push_back(std::make_unique<_zes_freq_handle_t>(
        _zes_freq_handle_t{d, ZES_FREQ_DOMAIN_GPU}));
    s.freqs.push_back(std::make_unique<_zes_freq_handle_t>(
        _zes_freq_handle_t{d, ZES_FREQ_DOMAIN_MEMORY}));
  }
}

int enter(State& s, const char* function, bool device_call) {
  if (!s.initialised) return ZE_RESULT_ERROR_UNINITIALIZED;
  const int code = s.faults.next("XALSIM_ZE_FAIL", function);
  if (code != 0) {
    if (code == ZE_RESULT_ERROR_DEVICE_LOST) s.lost = true;
    return code;
  }
  if (device_call && s.lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  return 0;
}

int driver_index(State& s, ze_driver_handle_t driver) {
  for (size_t i = 0; i < s.driver_count; ++i) {
    if (driver == &s.drivers[i]) return static_cast<int>(i);
  }
  if (npu_listed(s) && driver == &s.drivers[kNpuDriver]) return kNpuDriver;
  return -1;
}

Allocation* find(State& s, const void* pointer, uintptr_t* base) {
  const auto value = reinterpret_cast<uintptr_t>(pointer);
  auto found = s.allocations.upper_bound(value);
  if (found == s.allocations.begin()) return nullptr;
  --found;
  if (value >= found->first + found->second.size) return nullptr;
  if (base != nullptr) *base = found->first;
  return &found->second;
}

bool operand_ok(State& s, const void* pointer, size_t bytes) {
  if (pointer == nullptr) return false;
  uintptr_t base = 0;
  Allocation* allocation = find(s, pointer, &base);
  if (allocation == nullptr) return true;  // host memory
  return reinterpret_cast<uintptr_t>(pointer) + bytes <= base + allocation->size;
}

}  // namespace xalsim
