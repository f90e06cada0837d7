// sim_nvml.cpp -- a simulated NVML for the tests (SIMULATION ONLY): the
// sensors of the simulated driver's devices, some of them unsupported, as
// on cards and drivers that lack them. Device 1 is found by PCI bus id,
// device 0 only by UUID (as when bus ids do not match, in some VMs).
// Xid events: one event set; a test raises an Xid on a card with
// xalsim_nvml_raise_xid(), delivered to the set when the card's Xid events
// are registered (XALSIM_NVML_NO_EVENTS=1 refuses registration, as NVML does
// where a card or container has no events). A wait never blocks.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

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

// nvmlEventData_t as nvmlEventSetWait_v2 fills it.
struct EventData {
  void* device;
  unsigned long long event_type;
  unsigned long long event_data;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
struct EventSet {
  std::mutex mutex;
  bool created = false;
  bool registered[2] = {false, false};
  std::deque<EventData> pending;
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

XALSIM_NVML_API int nvmlEventSetCreate(void** out) {
  if (out == nullptr) return kInvalidArgument;
  std::lock_guard<std::mutex> lock(event_set.mutex);
  event_set.created = true;
  *out = &event_set;
  return kSuccess;
}

XALSIM_NVML_API int nvmlDeviceRegisterEvents(void* device, unsigned long long types,
                                             void* set) {
  Card* c = card(device);
  if (c == nullptr || set != &event_set) return kInvalidArgument;
  const char* off = std::getenv("XALSIM_NVML_NO_EVENTS");
  if ((off != nullptr && off[0] == '1') || (types & ~kEventXid) != 0) {
    return kNotSupported;
  }
  std::lock_guard<std::mutex> lock(event_set.mutex);
  event_set.registered[c->index] = true;
  return kSuccess;
}

XALSIM_NVML_API int nvmlEventSetWait_v2(void* set, EventData* out, unsigned int) {
  if (set != &event_set || out == nullptr) return kInvalidArgument;
  std::lock_guard<std::mutex> lock(event_set.mutex);
  if (event_set.pending.empty()) return kTimeout;
  *out = event_set.pending.front();
  event_set.pending.pop_front();
  return kSuccess;
}

XALSIM_NVML_API int nvmlEventSetFree(void* set) {
  if (set != &event_set) return kInvalidArgument;
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
  event_set.pending.push_back({&cards[index], kEventXid, xid, 0xFFFFFFFFu, 0xFFFFFFFFu});
  return 1;
}
