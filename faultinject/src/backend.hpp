// The fault backend's objects. Each wraps the target backend's object and
// keeps the state the fault backend needs (sticky errors, pending
// asynchronous errors). The backend owns every wrapper; wrappers are freed
// when released through the table (a stream or event only once the target
// released its object) or at shutdown.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine.hpp"
#include "fault_log.hpp"
#include "xal/xal_backend.h"
#include "xal/xal_fault.h"
#include "xalsupport/guarded.h"

struct xal_backend_s;  // = xal::fault::FaultBackend (see backend.cpp casts)

namespace xal::fault {

class FaultBackend;

struct FaultStream;

struct DeviceState {
  std::atomic<bool> sticky{false};
  std::atomic<bool> pending{false};
  std::mutex mutex;  // guards the fields below
  ErrorSpec sticky_error;
  std::string sticky_message;
  ErrorSpec pending_error;
  std::string pending_message;
  // The stream of the call the pending error was injected into (compared,
  // never dereferenced): only a sync of that stream, of an event recorded
  // on it, or of the device takes the error. nullptr: any sync on the
  // device (a call without a stream, or its stream was destroyed).
  const FaultStream* pending_stream = nullptr;
  std::atomic<uint64_t> injected{0};
};

struct FaultDevice {
  FaultBackend* backend = nullptr;
  xal_bdevice_t* target = nullptr;
  uint32_t index = 0;
  DeviceState state;
};

struct FaultStream {
  FaultDevice* device = nullptr;
  xal_bstream_t* target = nullptr;
  std::atomic<bool> dead{false};  // its device was reset
};

struct FaultEvent {
  FaultDevice* device = nullptr;
  xal_bevent_t* target = nullptr;
  std::atomic<bool> dead{false};
  // The stream of its last event_record (compared, never dereferenced).
  std::atomic<const FaultStream*> recorded_on{nullptr};
};

struct FaultModule;
struct FaultKernel {
  FaultModule* module = nullptr;
  xal_bkernel_t* target = nullptr;
};

struct FaultModule {
  FaultDevice* device = nullptr;
  xal_bmodule_t* target = nullptr;
  std::atomic<bool> dead{false};
  std::mutex mutex;
  std::unordered_map<xal_bkernel_t*, std::unique_ptr<FaultKernel>> kernels;
};

// The ranks made by one comm_create: aborting any of them ends the injected
// hangs of all of them (as the targets abort the whole clique).
struct CommGroup {
  // Incremented under FaultBackend's hang mutex by every abort; read
  // without it when a collective begins.
  std::atomic<uint64_t> aborts{0};
};

// What a collective passes to FaultBackend::before: its communicator's
// time-out and the group's abort count when the call began, so that an
// abort from then on ends an injected hang.
struct CommCall {
  uint64_t timeout_ms = 0;
  CommGroup* group = nullptr;
  uint64_t aborts_seen = 0;
};

struct FaultComm {
  FaultDevice* device = nullptr;
  std::shared_ptr<CommGroup> group;
  xal_bcomm_t* target = nullptr;
  uint32_t rank = 0;
  uint32_t size = 1;
  uint32_t timeout_ms = 0;
};

// A set of owned wrappers, keyed by address. Thread-safe.
template <class T>
class ObjectSet {
 public:
  T* add(std::unique_ptr<T> object) {
    std::lock_guard lock(mutex_);
    T* raw = object.get();
    map_.emplace(raw, std::move(object));
    return raw;
  }
  std::unique_ptr<T> take(T* object) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(object);
    if (it == map_.end()) return nullptr;
    auto owned = std::move(it->second);
    map_.erase(it);
    return owned;
  }
  // Calls f(object) under the lock when `key` is one of the set's objects
  // (never dereferenced otherwise); false when it is not.
  template <class F>
  bool visit(const void* key, F&& f) {
    std::lock_guard lock(mutex_);
    auto it = map_.find(static_cast<T*>(const_cast<void*>(key)));
    if (it == map_.end()) return false;
    f(*it->second);
    return true;
  }
  template <class F>
  void for_each(F&& f) {
    std::lock_guard lock(mutex_);
    for (auto& [raw, owned] : map_) f(*owned);
  }
  void clear() {
    std::lock_guard lock(mutex_);
    map_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<T*, std::unique_ptr<T>> map_;
};

class FaultBackend {
 public:
  explicit FaultBackend(const xal_backend_services_t* services);
  ~FaultBackend();
  FaultBackend(const FaultBackend&) = delete;
  FaultBackend& operator=(const FaultBackend&) = delete;

  // Loads the plan of the environment and the target; returns a status.
  // When it fails and XAL_FAULT_LOG names a file, the log gets a line
  // {"event":"start_failed",...} with the reason, so that a runner such as
  // xal-fault learns why nothing could be injected.
  xal_status_t start(const char* argument);
  void stop();

  // Records error detail through the services and returns `status`.
  xal_status_t report(xal_status_t status, const std::string& message,
                      int64_t vendor_code = 0, const std::string& vendor = "");

  // The checks before forwarding a call: sticky state of `dev` (and `dev2`),
  // pending async errors at a sync point, then the rules. Returns
  // XAL_SUCCESS to forward the call; `flip` receives a bitflip to apply to
  // the output once the call succeeded. `comm` is the collective's
  // communicator (nullptr for other calls). `stream` is the call's stream
  // (for an event sync, the event's last recording stream; nullptr for
  // calls without one): an async error injected into the call waits for a
  // sync of that stream, and a sync takes only a pending error of its own
  // stream (or of none).
  xal_status_t before(Op op, FaultDevice* dev, FaultDevice* dev2,
                      std::optional<uint64_t> bytes, uint64_t output_bytes,
                      std::optional<Decision>* flip,
                      const CommCall* comm = nullptr,
                      const FaultStream* stream = nullptr);

  // before() for one call on several devices (comm_create): the sticky
  // state of each, then the rules once for the call (a rule for one device
  // matches when it is among `devs`).
  xal_status_t before_devices(Op op, std::span<FaultDevice* const> devs);

  // Corrupts the output of a call that succeeded on `stream`: host memory
  // `host` (dtoh) or device memory `dptr` of `dev` (`bytes` long), once
  // the stream has run the call. Queued in stream order without waiting
  // when the target has host functions (device memory the host cannot see
  // goes through a staging buffer: copy out, flip, copy back); otherwise,
  // and for a peer copy's output on another device than the stream's, the
  // stream is synchronised and the flip made before this returns.
  void flip_output(FaultStream* stream, FaultDevice* dev, xal_devptr_t dptr,
                   void* host, uint64_t bytes, const Decision& d);

  // Forgets `stream` as the stream of its device's pending error: a
  // destroyed stream's error goes to the next sync on the device.
  void unbind_pending(FaultStream* stream);

  // Clears `dev`'s sticky and pending errors, resets the target device and,
  // once the target's reset succeeded, invalidates the device's wrappers
  // (a target without device_reset keeps its objects, and so do they).
  xal_status_t reset_device(FaultDevice* dev);
  xal_status_t health(FaultDevice* dev, xal_device_health_t* out);

  // Plan control (xal_fault.h).
  xal_status_t load_plan(const char* text, uint32_t flags);
  // Ends with ABORTED the injected hangs of `group`'s collectives that
  // began before this call, including those not yet waiting. Thread-safe.
  void abort_comm(CommGroup& group);

  const xal_backend_services_t* services;
  xal_backend_table_t t{};  // the target's table, entries past its size NULL
  xal_backend_t* target = nullptr;
  std::string target_name;
  std::string display_name;
  uint32_t target_flags = 0;
  std::vector<std::unique_ptr<FaultDevice>> devices;
  Engine engine;
  // Serialises the plan changes of the control extension (load_plan, clear)
  // so that appended rules get unique default names.
  std::mutex plan_mutex;
  FaultLog log;
  // The hang time-out when neither the rule, its plan nor the communicator
  // gives one: XAL_COMM_TIMEOUT_MS, else 10 s.
  uint64_t default_timeout_ms = 10000;
  std::optional<uint64_t> seed_override;
  ObjectSet<FaultStream> streams;
  ObjectSet<FaultEvent> events;
  ObjectSet<FaultModule> modules;
  ObjectSet<FaultComm> comms;
  std::mutex host_mutex;
  std::unordered_map<void*, size_t> own_host;  // host_alloc when target lacks

  // The staging buffer of one flip queued on a stream (flip_output). Its
  // host functions touch only this object, never the target.
  struct FlipStaging {
    FaultDevice* device = nullptr;  // whose stream runs it
    uint8_t* host = nullptr;        // the target's host_alloc, or `owned`
    std::unique_ptr<uint8_t[]> owned;
    std::vector<BitFlip> flips;
    std::atomic<bool> done{false};  // the stream has passed the copy back
    static void flip(void* user);
    static void finish(void* user);
  };

 private:
  xal_status_t inject(Decision& d, Op op, FaultDevice* dev,
                      std::optional<uint64_t> bytes,
                      std::optional<Decision>* flip, const CommCall* comm,
                      const FaultStream* stream);
  // Queues the flip of device memory through a staging buffer (see
  // flip_output); false when nothing could be queued.
  bool queue_staged_flip(FaultStream* stream, xal_devptr_t dptr,
                         uint64_t bytes, const Decision& d);
  // Runs fn(user) once `stream` reaches this point: a host function, or
  // (when that cannot be queued) after synchronising the stream. False
  // when neither worked: fn never runs.
  bool in_stream_order(xal_bstream_t* stream, void (*fn)(void*), void* user);
  // Frees the staging buffers whose flips are done (all of them with
  // `all`, after draining their devices: at shutdown). Thread-safe.
  void free_staging(bool all);

  xal_status_t sticky_error(FaultDevice* dev, Op op);
  // Reports the pending asynchronous error `e` that this call took from
  // `dev` (it is delivered once).
  xal_status_t report_pending(FaultDevice* dev, Op op, const ErrorSpec& e,
                              const std::string& message);
  xal_status_t hang(const Decision& d, Op op, FaultDevice* dev,
                    const CommCall* comm);
  // Ends every injected hang, refuses new ones, and returns once no thread
  // is left in one (see ActiveHang). Thread-safe.
  void end_hangs();
  // Counts one injected hang in active_hangs_ while it lives.
  class ActiveHang {
   public:
    explicit ActiveHang(FaultBackend& b);
    ~ActiveHang();
    ActiveHang(const ActiveHang&) = delete;
    ActiveHang& operator=(const ActiveHang&) = delete;

   private:
    FaultBackend& backend_;
  };
  void set_sticky(FaultDevice* dev, const ErrorSpec& e, const std::string& m);
  xal_status_t set_up(const char* argument);
  // report() that also keeps the message for the start-failure log line.
  xal_status_t refuse_start(xal_status_t status, const std::string& message);
  xal_status_t refuse_to_wrap_itself(const std::string& name);
  void log_start_failure(xal_status_t status) const;

  std::string start_error_;  // the reason start() failed, as reported

  std::mutex staging_mutex_;  // guards staging_
  std::vector<std::unique_ptr<FlipStaging>> staging_;

  std::mutex hang_mutex_;  // guards the fields below and CommGroup::aborts
  std::condition_variable hang_cv_;
  bool stopping_ = false;    // stop() began: hangs end at once
  uint64_t active_hangs_ = 0;  // hangs not yet reported (ActiveHang)
};

// The fault backend's context for the backends' one exception barrier,
// xal::support::guarded(entry, operation, body): words what the barrier
// caught as "fault: ..." and reports it through the backend `backend`
// (borrowed; it outlives the call).
struct FaultEntry {
  FaultBackend* backend;
  xal_status_t fail(const xal::support::Caught& caught) const;
};
using xal::support::guarded;

inline FaultBackend* as_fault(xal_backend_t* b) {
  return reinterpret_cast<FaultBackend*>(b);
}
inline FaultDevice* as_fault(xal_bdevice_t* d) {
  return reinterpret_cast<FaultDevice*>(d);
}
inline FaultStream* as_fault(xal_bstream_t* s) {
  return reinterpret_cast<FaultStream*>(s);
}
inline FaultEvent* as_fault(xal_bevent_t* e) {
  return reinterpret_cast<FaultEvent*>(e);
}
inline FaultModule* as_fault(xal_bmodule_t* m) {
  return reinterpret_cast<FaultModule*>(m);
}
inline FaultKernel* as_fault(xal_bkernel_t* k) {
  return reinterpret_cast<FaultKernel*>(k);
}
inline FaultComm* as_fault(xal_bcomm_t* c) {
  return reinterpret_cast<FaultComm*>(c);
}
template <class To, class From>
To* as_target(From* p) {
  return reinterpret_cast<To*>(p);
}

// The table entries, by group (entries_*.cpp); table.cpp assembles them.
void fill_device_entries(xal_backend_table_t& table);
void fill_stream_entries(xal_backend_table_t& table);
void fill_comm_entries(xal_backend_table_t& table);
void fill_interop_entries(xal_backend_table_t& table);
const xal_fault_control_v1_t* fault_control_table();

}  // namespace xal::fault
