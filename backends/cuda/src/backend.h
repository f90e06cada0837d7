// backend.h -- the CUDA backend's objects behind the plugin ABI's opaque
// types, and the helpers every entry uses (errors, current context,
// health). Internal to the plugin.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dynamic_symbols.h"
#include "xal/xal_backend.h"
#include "xalsupport/guarded.h"
#include "xalsupport/ipc_owners.h"
#include "xalsupport/message_pairs.h"

namespace xal::cuda {
class Nvml;
class Nccl;
class Kernels;
class HostFuncRunner;
class DriverHostFuncs;
}  // namespace xal::cuda

struct xal_bdevice_s;

// One backend instance: the driver, its devices and the optional libraries.
struct xal_backend_s {
  const xal_backend_services_t* services = nullptr;
  xal::cuda::DriverSymbols driver;
  int driver_version = 0;
  std::vector<std::unique_ptr<xal_bdevice_s>> devices;
  std::unique_ptr<xal::cuda::Nvml> nvml;
  std::unique_ptr<xal::cuda::Nccl> nccl;
  std::string note;  // describe(): "simulated driver", NCCL/NVML status
  // Failures of queued work the driver's streams cannot carry (a send and
  // receive that disagree, comm.cpp), for the streams' next synchronize.
  xal::support::StreamFailures stream_failures;
  // Host functions on a thread of their stream (host_funcs.h); false with
  // XAL_CUDA_HOST_FUNCS=driver: straight through cuLaunchHostFunc.
  bool host_func_threads = true;
  // Page-locked host memory the backend handed out or registered, so that
  // a device reset (which drops the context's registrations) can register
  // it again. Guarded by host_mutex.
  struct HostBlock {
    enum Kind {
      kDriverAllocated,  // cuMemHostAlloc (a driver that cannot register)
      kOwnPages,         // host_alloc: xal's pages, registered
      kCallerPages,      // host_register: the caller's pages
    };
    size_t bytes = 0;
    Kind kind = kOwnPages;
  };
  std::mutex host_mutex;
  std::unordered_map<void*, HostBlock> host_blocks;

  ~xal_backend_s();

  // Reports a failed driver call: maps the result, records vendor code and
  // name through services->set_error, and marks `device` unhealthy when the
  // error is sticky. Returns the xal status (or `as`, when given, for
  // failures that make the whole backend unavailable). Thread-safe.
  xal_status_t fail(CUresult result, const char* call, xal_bdevice_s* device,
                    xal_status_t as = XAL_SUCCESS);
  // What fail() reports, without recording it (the caller may try another
  // way first): the status, the CUDA name and the message. Marks `device`
  // unhealthy on a sticky error all the same. Thread-safe.
  struct Failure {
    xal_status_t status = XAL_SUCCESS;
    CUresult result = CUDA_SUCCESS;
    const char* name = nullptr;
    std::string message;
  };
  Failure describe_failure(CUresult result, const char* call,
                           xal_bdevice_s* device,
                           xal_status_t as = XAL_SUCCESS);
  // Records a failure built by describe_failure; returns its status.
  xal_status_t report(const Failure& failure) const;
  // Reports an error found by the backend itself (no vendor code).
  xal_status_t error(xal_status_t status, const std::string& message) const;
  // Logs a line through the core's services.
  void log(int level, const std::string& message) const;
};

// A stream, event or module remembers the device generation it was made
// in; xal_device_reset starts a new generation and the old objects are dead.
struct xal_bstream_s {
  xal_bdevice_s* device = nullptr;
  CUstream stream = nullptr;
  uint64_t generation = 0;
  // False for a stream adopted by stream_import (interop.cpp): the caller
  // owns the CUstream, so its release waits for it but never destroys it.
  bool owned = true;
  // Runs the stream's host functions, made on the first one (null when the
  // driver cannot wait on host memory: cuLaunchHostFunc alone then, through
  // driver_host_funcs).
  std::mutex host_funcs_mutex;
  bool host_funcs_tried = false;
  std::unique_ptr<xal::cuda::HostFuncRunner> host_funcs;
  std::string host_funcs_missing;  // why host_funcs is null, once tried
  std::unique_ptr<xal::cuda::DriverHostFuncs> driver_host_funcs;

  xal_bstream_s();
  // Runs the host functions the driver never reached (host_funcs.h). The
  // stream must be idle or dead, and the caller must hold no lock of the
  // device (objects_mutex): a host function may call the backend.
  ~xal_bstream_s();
};

struct xal_bevent_s {
  xal_bdevice_s* device = nullptr;
  CUevent event = nullptr;
  uint64_t generation = 0;
  bool timing = true;
};

struct xal_bkernel_s {
  xal_bmodule_s* module = nullptr;
  CUfunction function = nullptr;
  std::string name;
};

struct xal_bmodule_s {
  xal_bdevice_s* device = nullptr;
  CUmodule module = nullptr;
  uint64_t generation = 0;
  std::mutex mutex;  // guards kernels
  std::unordered_map<std::string, std::unique_ptr<xal_bkernel_s>> kernels;
};

// One CUDA device and its primary context. Owns the wrappers of its
// streams, events and modules so that a reset or shutdown can release them.
struct xal_bdevice_s {
  xal_backend_s* backend = nullptr;
  uint32_t index = 0;  // index within the backend
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::atomic<uint64_t> generation{1};

  // Health: a sticky error seen on this device (CUDA_SUCCESS when healthy).
  std::atomic<bool> unhealthy{false};
  std::mutex health_mutex;
  CUresult sticky_result = CUDA_SUCCESS;
  xal_status_t sticky_status = XAL_SUCCESS;
  std::string sticky_message;
  // Set when xal_device_reset did not clear the sticky error (the driver
  // keeps some, 700 and the like, until the process ends).
  bool reset_did_not_clear = false;

  // Live objects, by address, and device allocations with their generation.
  std::mutex objects_mutex;
  std::unordered_map<void*, std::unique_ptr<xal_bstream_s>> streams;
  std::unordered_map<void*, std::unique_ptr<xal_bevent_s>> events;
  std::unordered_map<void*, std::unique_ptr<xal_bmodule_s>> modules;
  std::unordered_map<CUdeviceptr, uint64_t> allocations;
  // Allocations made before the last reset, not freed by the caller yet
  // (count per address: the new context may hand the same address out
  // again, and freeing the old one must not free the new one).
  std::unordered_map<CUdeviceptr, uint32_t> stale_allocations;
  // Memory the caller allocated and imported (mem_import): its size. Never
  // freed by the backend.
  std::unordered_map<CUdeviceptr, size_t> imports;
  // Mappings of other processes' memory (mem_ipc_open), with the generation
  // they were opened in (a reset unmaps them with the context).
  struct IpcMapping {
    uint64_t generation = 0;
    uint64_t bytes = 0;
    int32_t owner_pid = 0;
  };
  std::unordered_map<CUdeviceptr, IpcMapping> ipc_opened;
  // Their exporters: copies and memsets that touch the memory of one that
  // has ended are refused (stream.cpp). Thread-safe on its own.
  xal::support::IpcOwners ipc_owners;

  // Peer access to other devices, enabled on first use.
  std::mutex peer_mutex;
  std::vector<int8_t> peer_state;  // -1 unknown, 0 no access, 1 enabled

  // NVML handle of the card (null without NVML) and its energy counter at
  // init, in millijoules.
  void* nvml_device = nullptr;
  // xal's own kernels (kernels.cpp), loaded on first use per generation.
  std::mutex builtin_mutex;
  xal_bmodule_s* builtin = nullptr;
  uint64_t builtin_generation = 0;

  uint64_t energy_base_mj = 0;
  bool energy_valid = false;
  // Whether NVML reports the card's Xid events (metrics' last_xid).
  bool xid_watched = false;

  // Makes the primary context current on the calling thread (cheap when it
  // already is). Returns CUDA_SUCCESS or the driver error.
  CUresult make_current();
  // XAL_SUCCESS, or the sticky status (and error detail) when unhealthy.
  xal_status_t check_health();
  // Records a sticky error (the first one stays until a reset).
  void mark_unhealthy(CUresult result, xal_status_t status,
                      const std::string& message);
  // Records a sticky error that xal_device_reset did not clear: it replaces
  // the one that made the device unhealthy, and the device stays so.
  void mark_kept_by_reset(CUresult result, xal_status_t status,
                          const std::string& message);
};

namespace xal::cuda {

// The status of the calling entry for an object made before the last reset.
xal_status_t stale_object(const xal_backend_s* backend, const char* what);

// The message of the last error the calling thread recorded through this
// plugin ("" if none): for work that fails where no caller sees the error
// (a collective run in a host function).
const std::string& last_error_message();

// The calling thread's context before its outermost entry (guarded) made a
// device's current (make_current): given back when that entry returns, so
// that a caller that also uses the CUDA runtime or driver on the thread
// finds its own context current again. A thread with no context keeps the
// device's, so that a program using xal alone pays no switch per call.
struct ContextRestore {
  int depth = 0;
  bool changed = false;
  CUcontext previous = nullptr;
};
inline thread_local ContextRestore t_context_restore;

// Counts the entries of the thread; the outermost gives the context back.
class EntryScope {
 public:
  explicit EntryScope(const xal_backend_s* backend) : backend_(backend) {
    ++t_context_restore.depth;
  }
  ~EntryScope();
  EntryScope(const EntryScope&) = delete;
  EntryScope& operator=(const EntryScope&) = delete;

 private:
  const xal_backend_s* backend_;
};

// The CUDA entry context for the shared exception barrier
// (support::guarded(Entry{backend}, __func__, body)): an exception becomes
// a status with the CUDA backend's wording ("cuda: out of host memory",
// "cuda: internal error: <what>"; a support::StatusError its own message)
// recorded through `backend` (may be null: the bare status; not owned),
// and for the whole call the thread's context is given back
// (ContextRestore). Thread-safe.
struct Entry {
  explicit Entry(const xal_backend_s* entry_backend)
      : backend(entry_backend), scope(entry_backend) {}
  xal_status_t fail(const support::Caught& caught) const {
    if (backend == nullptr) return caught.status;
    switch (caught.kind) {
      case support::Caught::Kind::kStatusError:
        return backend->error(caught.status, caught.what);
      case support::Caught::Kind::kOutOfHostMemory:
        return backend->error(caught.status, "cuda: out of host memory");
      case support::Caught::Kind::kException:
        return backend->error(caught.status,
                              std::string("cuda: internal error: ") + caught.what);
      case support::Caught::Kind::kUnknown:
        break;
    }
    return backend->error(caught.status, "cuda: internal error");
  }

  const xal_backend_s* backend;
  EntryScope scope;
};
using support::guarded;

}  // namespace xal::cuda
