// sim_state.h -- state of the simulated CUDA driver (libcuda.so.1 for
// tests): devices over host memory, primary contexts, streams run in order
// by a worker thread each, events with host timestamps, a trivial module
// loader, and error injection. SIMULATION ONLY: nothing here touches a GPU.
#pragma once

#include <cuda.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace xalsim {

using Clock = std::chrono::steady_clock;

struct Context;

// An in-order queue run by one worker thread.
struct Stream {
  Context* ctx = nullptr;
  unsigned flags = 0;  // cuStreamCreate's (CU_STREAM_NON_BLOCKING or 0)
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<std::function<CUresult()>> queue;
  bool busy = false;
  bool stop = false;
  std::atomic<bool> stopping{false};  // abandon(): a pending wait gives up
  CUresult error = CUDA_SUCCESS;  // first failure of queued work
  std::atomic<bool> exited{false};  // the worker has returned
  std::thread worker;

  ~Stream();  // abandons a stream still running
  void run();
  void push(std::function<CUresult()> task);
  CUresult drain();  // waits until idle; returns and clears `error`
  void retire();     // the worker ends once the queue is empty; no wait
  void shutdown();   // drains and joins
  void abandon();    // drops what is queued (a context reset) and joins
};

struct Event {
  Context* ctx = nullptr;
  bool timing = true;
  std::mutex mutex;
  std::condition_variable cv;
  uint64_t recorded = 0;   // record calls so far
  uint64_t completed = 0;  // records the stream has reached
  Clock::time_point when{};
};

struct Module {
  Context* ctx = nullptr;
  std::set<std::string> entries;
  std::set<std::string> got;  // entries cuModuleGetFunction has loaded
};

struct Function {
  Module* module = nullptr;
  std::string name;
  int max_dynamic_shared = 48 * 1024;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_...
};

// The primary context of a device.
struct Context {
  int device = 0;
  int retained = 0;
  std::atomic<CUresult> sticky{CUDA_SUCCESS};
  // Set when a reset kept the sticky error (XALSIM_CUDA_STICKY_SURVIVES_RESET):
  // cuDevicePrimaryCtxRetain then fails with it, as an H200's driver (580)
  // does after CUDA_ERROR_ILLEGAL_ADDRESS.
  std::atomic<bool> sticky_kept_by_reset{false};
  std::set<Stream*> streams;
  // Destroyed streams whose queued work still runs (cuStreamDestroy
  // returns at once, as the real driver's does); a reset drops their work.
  std::vector<std::shared_ptr<Stream>> retired;
  std::set<Event*> events;
  std::map<Module*, std::vector<std::unique_ptr<Function>>> modules;
  std::set<int> peers;  // devices this context may access directly
  std::set<int> enabled_peers;  // cuCtxEnablePeerAccess done (by device)
  std::mutex host_function_mutex;  // XALSIM_CUDA_SERIAL_HOST_FUNCS
};

struct Allocation {
  size_t size = 0;
  int device = 0;
  // XALSIM_CUDA_IPC=1: device memory is a shared mapping of a memory file
  // (memfd) of `mapped` bytes, which another process maps through
  // /proc/<pid>/fd/<fd> (sim_ipc.cpp). -1: heap memory.
  int fd = -1;
  size_t mapped = 0;
  // Mapped from another process's handle (cuIpcOpenMemHandle): not this
  // process's memory, closed with cuIpcCloseMemHandle.
  bool opened = false;
};

// The whole driver. One instance per process; every field is guarded by
// `mutex` unless atomic.
struct Driver {
  std::mutex mutex;
  bool initialised = false;
  int device_count = 2;
  size_t memory_per_device = size_t{1} << 30;
  int version = 13000;
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<size_t> used;                       // bytes per device
  std::map<uintptr_t, Allocation> allocations;    // device memory
  // Freed device memory by rounded size, handed out again first (LIFO), as
  // the real driver reuses its virtual addresses, notably after a reset.
  std::map<size_t, std::vector<uintptr_t>> free_blocks;
  std::map<uintptr_t, size_t> host_allocations;   // cuMemHostAlloc
  std::map<uintptr_t, size_t> host_registered;    // cuMemHostRegister
  // The context each was made in: a reset of that context frees its
  // cuMemHostAlloc memory and drops its registrations (the real driver's
  // primary context reset destroys all of the context's allocations).
  std::map<uintptr_t, Context*> host_owner;
  // Every live object, owned here; handles are their addresses.
  std::map<Stream*, std::shared_ptr<Stream>> streams;  // shared: waiters
  std::map<Event*, std::unique_ptr<Event>> events;
  std::map<Module*, std::unique_ptr<Module>> modules;
  std::set<Function*> functions;  // owned by Context::modules
};

Driver& driver();
thread_local inline Context* current = nullptr;
// True on a stream worker while it runs a host function (cuLaunchHostFunc):
// the driver API may not be called there (CUDA_ERROR_NOT_PERMITTED).
thread_local inline bool in_host_function = false;

// The driver version reported (XALSIM_CUDA_VERSION, default 13000), read
// on every call so that a test can change it.
int driver_version();
// The flags cuGetProcAddress was asked with (see sim_core.cpp).
std::atomic<unsigned long long>& proc_flags_seen();

// Error injection (XALSIM_CUDA_FAIL). Returns the code to fail `name` with,
// or CUDA_SUCCESS. A sticky code also poisons the current context.
CUresult injected(const char* name);
bool is_sticky(CUresult r);
// The current context, or null; *out_error gets INVALID_CONTEXT or the
// context's sticky error.
Context* context_for_call(CUresult* out_error);
// True when [ptr, ptr+bytes) lies inside one live device allocation.
bool device_range_ok(CUdeviceptr ptr, size_t bytes);
// XALSIM_CUDA_IPC=1 (read on every call): device memory is shareable and
// cuGetProcAddress serves the cuIpc* functions; otherwise the simulation is
// a driver without them.
bool ipc_enabled();
// Gives back the memory of allocation `a` at `base` (d.mutex held; the
// caller erases it from d.allocations): heap blocks for reuse, shared
// mappings unmapped, opened ones unmapped without touching the device's use.
void release_allocation(Driver& d, uintptr_t base, const Allocation& a);
// The stream if it is live (null stream: returns null with ok = true).
Stream* find_stream(CUstream s, bool* ok);
// Runs `task` on `stream`, or now for the null stream.
CUresult submit(CUstream s, std::function<CUresult()> task);
// Destroys every object of `ctx` and frees its device's memory.
void reset_context(Context* ctx);
// XALSIM_CUDA_LOAD_SYNCS=1: waits, as cuCtxSynchronize does, until every
// stream of `ctx` is idle (errors are left for the streams' own calls).
// The real driver may do so in a module load, a kernel's first load
// (lazy loading, the default since CUDA 12.2) and cuCtxEnablePeerAccess: a
// thread that makes those calls while a stream of the context waits for
// it (cuStreamWaitValue32 on a word the thread writes) deadlocks.
void load_syncs(Context* ctx);

// The symbol table that cuGetProcAddress serves: base name -> function.
struct Symbol {
  const char* name;
  void* fn;
};
const std::vector<Symbol>& device_symbols();
const std::vector<Symbol>& memory_symbols();
const std::vector<Symbol>& stream_symbols();
const std::vector<Symbol>& module_symbols();
const std::vector<Symbol>& ipc_symbols();  // served only when ipc_enabled()

// Runs a kernel of a loaded module on the host (the kernels xal embeds and a
// few test kernels); unknown kernels do nothing.
CUresult run_kernel(const std::string& name, void** params,
                    unsigned long long threads);

}  // namespace xalsim
