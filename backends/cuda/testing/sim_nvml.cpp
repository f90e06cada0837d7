// sim_nvml.cpp -- a simulated NVML for the tests (SIMULATION ONLY): the
// sensors of the simulated driver's devices, some of them unsupported, as
// on cards and drivers that lack them. Device 1 is found by PCI bus id,
// device 0 only by UUID (as when bus ids do not match, in some VMs).
// Xid events: one event set; a test raises an Xid on a card with
// xalsim_nvml_raise_xid(), delivered to the set when the card's Xid events
// are registered (XALSIM_NVML_NO_EVENTS=1 refuses registration, as NVML does
// where a card or container has no events). A wait never blocks. Its
// functions are defined against the backend's declarations
// (src/nvml_api.h), so that the compiler checks their signatures.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "nvml_api.h"

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidArgument = 2;
constexpr int kNotSupported = 3;
constexpr int kNotFound = 6;
constexpr int kTimeout = 10;
constexpr unsigned long long kEventXid = 0x8;  // nvmlEventTypeXidCriticalError

struct Card {
  int index;
  std::atomic<unsigned long long> energy_mj;
};
Card cards[2] = {{0, 1000000}, {1, 2000000}};

struct EventSet {
  std::mutex mutex;
  bool created = false;
  bool registered[2] = {false, false};
  std::deque<nvmlEventData_t> pending;
};
EventSet event_set;

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

nvmlDevice_t handle_of(Card& c) { return reinterpret_cast<nvmlDevice_t>(&c); }

bool is_our_set(nvmlEventSet_t set) {
  return reinterpret_cast<EventSet*>(set) == &event_set;
}

Card* card(nvmlDevice_t device) {
  for (Card& c : cards) {
    if (device == handle_of(c)) return &c;
  }
  return nullptr;
}

}  // namespace

#define XALSIM_NVML_API extern "C" __attribute__((visibility("default")))

XALSIM_NVML_API int nvmlInit_v2(void) { return kSuccess; }
XALSIM_NVML_API int nvmlShutdown(void) { return kSuccess; }

XALSIM_NVML_API int nvmlDeviceGetHandleByPciBusId_v2(const char* bus,
                                                     nvmlDevice_t* out) {
  if (bus == nullptr || out == nullptr) return kInvalidArgument;
  if (std::strcmp(bus, "0000:11:00.0") != 0) return kNotFound;
  *out = handle_of(cards[1]);
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* out) {
  if (uuid == nullptr || out == nullptr) return kInvalidArgument;
  for (Card& c : cards) {
    char text[64];
    uuid_of(c.index, text, sizeof text);
    if (std::strcmp(uuid, text) == 0) {
      *out = handle_of(c);
      return kSuccess;
    }
  }
  return kNotFound;
}

XALSIM_NVML_API int nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                                  nvmlUtilization_t* out) {
  if (card(device) == nullptr || out == nullptr) return kInvalidArgument;
  out->gpu = 37;
  out->memory = 12;
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetMemoryInfo(nvmlDevice_t, nvmlMemory_t*) {
  return kNotSupported;
}

XALSIM_NVML_API int nvmlDeviceGetTemperature(nvmlDevice_t, int, unsigned int*) {
  return kNotSupported;
}

XALSIM_NVML_API int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* mw) {
  if (card(device) == nullptr || mw == nullptr) return kInvalidArgument;
  *mw = 123456;
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetTotalEnergyConsumption(
    nvmlDevice_t device, unsigned long long* mj) {
  Card* c = card(device);
  if (c == nullptr || mj == nullptr) return kInvalidArgument;
  *mj = c->energy_mj.fetch_add(5000);  // 5 J between reads
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type,
                                           unsigned int* mhz) {
  if (card(device) == nullptr || mhz == nullptr) return kInvalidArgument;
  if (type == 1) *mhz = 1980;       // NVML_CLOCK_SM
  else if (type == 2) *mhz = 2619;  // NVML_CLOCK_MEM
  else return kNotSupported;
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceGetTotalEccErrors(nvmlDevice_t, int, int,
                                                unsigned long long*) {
  return kNotSupported;
}

XALSIM_NVML_API int nvmlDeviceGetPcieReplayCounter(nvmlDevice_t device,
                                                   unsigned int* count) {
  if (card(device) == nullptr || count == nullptr) return kInvalidArgument;
  *count = 0;
  return kSuccess;
}

XALSIM_NVML_API int nvmlEventSetCreate(nvmlEventSet_t* out) {
  if (out == nullptr) return kInvalidArgument;
  std::lock_guard<std::mutex> lock(event_set.mutex);
  event_set.created = true;
  *out = reinterpret_cast<nvmlEventSet_t>(&event_set);
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                             unsigned long long types,
                                             nvmlEventSet_t set) {
  Card* c = card(device);
  if (c == nullptr || !is_our_set(set)) return kInvalidArgument;
  const char* off = std::getenv("XALSIM_NVML_NO_EVENTS");
  if ((off != nullptr && off[0] == '1') || (types & ~kEventXid) != 0) {
    return kNotSupported;
  }
  std::lock_guard<std::mutex> lock(event_set.mutex);
  event_set.registered[c->index] = true;
  return kSuccess;
}

XALSIM_NVML_API int nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* out,
                                        unsigned int) {
  if (!is_our_set(set) || out == nullptr) return kInvalidArgument;
  std::lock_guard<std::mutex> lock(event_set.mutex);
  if (event_set.pending.empty()) return kTimeout;
  *out = event_set.pending.front();
  event_set.pending.pop_front();
  return kSuccess;
}

XALSIM_NVML_API int nvmlEventSetFree(nvmlEventSet_t set) {
  if (!is_our_set(set)) return kInvalidArgument;
  std::lock_guard<std::mutex> lock(event_set.mutex);
  event_set.created = false;
  event_set.registered[0] = event_set.registered[1] = false;
  event_set.pending.clear();
  return kSuccess;
}

// Test control: card `index` reports Xid `xid`. Returns 1 when delivered
// (the card's Xid events are registered), 0 otherwise.
XALSIM_NVML_API int xalsim_nvml_raise_xid(int index, unsigned long long xid) {
  if (index < 0 || index > 1) return 0;
  std::lock_guard<std::mutex> lock(event_set.mutex);
  if (!event_set.created || !event_set.registered[index]) return 0;
  event_set.pending.push_back(
      {handle_of(cards[index]), kEventXid, xid, 0xFFFFFFFFu, 0xFFFFFFFFu});
  return 1;
}
