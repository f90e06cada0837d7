#include "sim_state.h"

#include <algorithm>
#include <cstdlib>

namespace xalsim {

State& state() {
  static State instance;
  return instance;
}

int& current_device() {
  thread_local int device = 0;
  return device;
}

bool is_sticky(int code) {
  return code == hipErrorIllegalAddress || code == hipErrorAssert ||
         code == hipErrorLaunchFailure || code == hipErrorLaunchTimeOut ||
         code == hipErrorECCNotCorrectable;
}

void configure(State& s) {
  const char* count_text = std::getenv("XALSIM_HIP_DEVICES");
  const char* memory_text = std::getenv("XALSIM_HIP_MEMORY");
  const long count = count_text != nullptr ? std::strtol(count_text, nullptr, 10) : 2;
  const size_t memory = memory_text != nullptr
                            ? std::strtoull(memory_text, nullptr, 10)
                            : (size_t{1} << 30);
  if (static_cast<long>(s.devices.size()) != count || !s.initialised) {
    s.devices.assign(static_cast<size_t>(count < 0 ? 0 : count), Device{});
  }
  for (Device& device : s.devices) device.total = memory;
  const char* partitions = std::getenv("XALSIM_HIP_PARTITIONS");
  s.partitions = partitions != nullptr ? std::max(1, std::atoi(partitions)) : 1;
  s.initialised = true;
}

int enter(State& s, const char* function, bool device_call) {
  if (!s.initialised) return hipErrorNotInitialized;
  int code = s.faults.next("XALSIM_HIP_FAIL", function);
  const int device = current_device();
  const bool valid = device >= 0 && device < static_cast<int>(s.devices.size());
  if (code != 0) {
    if (valid && is_sticky(code) && s.devices[device].sticky == 0) {
      s.devices[device].sticky = code;
    }
    return code;
  }
  if (device_call && valid) return s.devices[device].sticky;
  return 0;
}

bool in_allocation(State& s, const void* address, size_t bytes, int device) {
  const auto value = reinterpret_cast<uintptr_t>(address);
  auto found = s.allocations.upper_bound(value);
  if (found == s.allocations.begin()) return false;
  --found;
  const uintptr_t base = found->first;
  if (value < base || value + bytes > base + found->second.size) return false;
  return device < 0 || found->second.device == device;
}

}  // namespace xalsim
