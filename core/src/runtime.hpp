// The process-wide state between xal_init and xal_shutdown, and the checks
// every entry point starts with.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "error.hpp"
#include "objects.hpp"

namespace xal::core {

class HostMemory;
class PeerEngine;

struct Runtime {
  Runtime();
  ~Runtime();

  std::vector<std::unique_ptr<Backend>> backends;  // considered, in order
  std::vector<DeviceObj*> devices;                 // global index order
  bool validation = true;
  std::vector<std::string> search_dirs;  // plugin folders, in order
  // Which xal_init made this runtime (1, 2, ...): state a thread keeps
  // across calls (an open group) belongs to one runtime.
  const uint64_t epoch;

  std::mutex comms_mu;
  std::unordered_set<CommObj*> comms;

  // Plugins a wrapper loaded through services->load_backend.
  std::mutex extra_mu;
  std::vector<std::unique_ptr<Backend>> extra;

  std::mutex config_mu;
  std::map<std::string, std::string> config;  // get_config cache

  std::unique_ptr<HostMemory> host;
  std::unique_ptr<PeerEngine> peer;

  // Partitions (partition.hpp): serialises creating and undoing them, and
  // keeps the problems xal_init found in XAL_PARTITIONS.
  std::mutex partition_mu;
  std::vector<std::string> partition_errors;
};

// The runtime, or nullptr before xal_init / after xal_shutdown began.
extern std::atomic<Runtime*> g_runtime;

// The runtime for a call that takes a handle: the handle keeps it alive (a
// call racing xal_shutdown races the destruction of its handle, the
// caller's error as for any destroy, docs/ABI.md rule 3). One load: the
// dispatch path.
inline Runtime* runtime() noexcept {
  return g_runtime.load(std::memory_order_acquire);
}

// The runtime for a call that takes no handle (xal_device_count,
// xal_host_alloc, ...), held for the hold's lifetime: xal_shutdown
// unpublishes the runtime first and then waits until every hold on it is
// released before tearing it down, so such a call either runs on a whole
// runtime or sees none (get() is nullptr: NOT_INITIALIZED). Costs two atomic
// read-modify-writes on a counter every thread shares: not for the dispatch
// path. Holds nest; a thread must not call xal_shutdown while holding one.
class RuntimeHold {
 public:
  RuntimeHold() noexcept;
  ~RuntimeHold();
  RuntimeHold(const RuntimeHold&) = delete;
  RuntimeHold& operator=(const RuntimeHold&) = delete;

  Runtime* get() const noexcept { return rt_; }

 private:
  uint32_t phase_;  // which counter this hold counts in
  Runtime* rt_;
};

// Publishes the runtime xal_init built (under xal_init's lock).
void publish_runtime(Runtime* rt) noexcept;

// For xal_shutdown (under xal_init's lock): unpublishes the runtime, waits
// until no RuntimeHold on it is left, and returns it, now the caller's alone
// (nullptr when none was published).
Runtime* unpublish_runtime() noexcept;

// The runtime xal_init is building (services may be called during init).
extern Runtime* g_building;

// Writes a log line under "core" (XAL_LOG_LEVEL).
void log_message(int level, const char* message);

// NOT_INITIALIZED with its message.
xal_status_t not_initialized();

// The status and message for a handle that failed its check: NOT_INITIALIZED
// when xal is not initialised, else INVALID_HANDLE naming the parameter.
xal_status_t bad_handle(const void* handle, const char* what);

// INVALID_ARGUMENT "<what> is NULL".
xal_status_t null_argument(const char* what);

// Checks an ABI struct's struct_size against the 1.0 size.
template <class T>
inline bool struct_ok(const T* p) noexcept {
  return p && p->struct_size >= sizeof(T);
}
xal_status_t bad_struct(const void* p, size_t struct_size, size_t needed,
                        const char* what);

// For an output struct that grew after 1.0: accepts any struct_size from
// `first_size` (its 1.0 size) up.
template <class T>
inline bool struct_ok_from(const T* p, size_t first_size) noexcept {
  return p && p->struct_size >= first_size;
}
// Copies `value` into `*out` up to out->struct_size (the caller's version of
// the struct); struct_size itself keeps the caller's value.
template <class T>
inline void copy_out_struct(T* out, const T& value) noexcept {
  const size_t keep = out->struct_size;
  std::memcpy(static_cast<void*>(out), &value, keep < sizeof value ? keep : sizeof value);
  out->struct_size = keep;
}

#define XAL_CHECK_STRUCT(p, name)                                       \
  do {                                                                  \
    if (!struct_ok(p))                                                  \
      return bad_struct(p, (p) ? (p)->struct_size : 0, sizeof(*(p)),    \
                        name);                                          \
  } while (0)

// The services table plugins receive.
const xal_backend_services_t* services();

// Checks a device range against the registry (with validation on).
// Returns XAL_SUCCESS or OUT_OF_BOUNDS with a message naming `what`; the
// message's look at the other devices takes rt->partition_mu (the device
// list changes with xal_device_partition). Thread-safe.
xal_status_t check_range(Runtime* rt, DeviceObj* device, uint64_t ptr,
                         uint64_t bytes, const char* what);

// Wraps a backend stream just created (or imported) on `d` in a public
// handle the caller owns. On failure destroys the backend stream and
// throws. Thread-safe.
xal_stream_t publish_stream(DeviceObj* d, xal_bstream_t* native);

}  // namespace xal::core
