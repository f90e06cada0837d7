// sim_nvml.cpp -- a simulated NVML for the tests (SIMULATION ONLY): the
// sensors of the simulated driver's devices, some of them unsupported, as
// on cards and drivers that lack them. Device 1 is found by PCI bus id,
// device 0 only by UUID (as when bus ids do not match, in some VMs).
#include <atomic>
#include <cstdio>
#include <cstring>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;

struct Card {
  int index;
  std::atomic<unsigned long long> energy_mj;
};
Card cards[2] = {{0, 1000000}, {1, 2000000}};

// The UUID the simulated driver gives device `index`, as NVML spells it.
void uuid_of(int index, char* out, size_t size) {
  unsigned char bytes[16] = {};
  std::memcpy(bytes, "XALSIM-CUDA", 11);
  bytes[15] = static_cast<unsigned char>(index);
  std::snprintf(out, size,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                "%02x%02x%02x%02x%02x%02x",
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5],
                bytes[6], bytes[7], bytes[8], bytes[9], bytes[10], bytes[11],
                bytes[12], bytes[13], bytes[14], bytes[15]);
}

Card* card(void* device) {
  for (Card& c : cards) {
    if (device == &c) return &c;
  }
  return nullptr;
}

}  // namespace

#define XALSIM_NVML_API extern "C" __attribute__((visibility("default")))

XALSIM_NVML_API int nvmlInit_v2(void) { return kSuccess; }
XALSIM_NVML_API int nvmlShutdown(void) { return kSuccess; }

XALSIM_NVML_API int nvmlDeviceGetHandleByPciBusId_v2(const char* bus,
                                                     void** out) {
  if (bus == nullptr || out == nullptr) return kInvalidArgument;
  if (std::strcmp(bus, "0000:11:00.0") != 0) return kNotFound;
  *out = &cards[1];
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetHandleByUUID(const char* uuid, void** out) {
  if (uuid == nullptr || out == nullptr) return kInvalidArgument;
  for (Card& c : cards) {
    char text[64];
    uuid_of(c.index, text, sizeof text);
    if (std::strcmp(uuid, text) == 0) {
      *out = &c;
      return kSuccess;
    }
  }
  return kNotFound;
}

XALSIM_NVML_API int nvmlDeviceGetUtilizationRates(void* device,
                                                  unsigned int* out) {
  if (card(device) == nullptr || out == nullptr) return kInvalidArgument;
  out[0] = 37;  // gpu
  out[1] = 12;  // memory
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetMemoryInfo(void*, void*) {
  return kNotSupported;
}

XALSIM_NVML_API int nvmlDeviceGetTemperature(void*, int, unsigned int*) {
  return kNotSupported;
}

XALSIM_NVML_API int nvmlDeviceGetPowerUsage(void* device, unsigned int* mw) {
  if (card(device) == nullptr || mw == nullptr) return kInvalidArgument;
  *mw = 123456;
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetTotalEnergyConsumption(
    void* device, unsigned long long* mj) {
  Card* c = card(device);
  if (c == nullptr || mj == nullptr) return kInvalidArgument;
  *mj = c->energy_mj.fetch_add(5000);  // 5 J between reads
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetClockInfo(void* device, int type,
                                           unsigned int* mhz) {
  if (card(device) == nullptr || mhz == nullptr) return kInvalidArgument;
  if (type == 1) *mhz = 1980;       // NVML_CLOCK_SM
  else if (type == 2) *mhz = 2619;  // NVML_CLOCK_MEM
  else return kNotSupported;
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetTotalEccErrors(void*, int, int,
                                                unsigned long long*) {
  return kNotSupported;
}

XALSIM_NVML_API int nvmlDeviceGetPcieReplayCounter(void* device,
                                                   unsigned int* count) {
  if (card(device) == nullptr || count == nullptr) return kInvalidArgument;
  *count = 0;
  return kSuccess;
}
