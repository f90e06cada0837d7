// A fake OpenCL library for what real drivers do not produce on demand
// (init failures, failed commands, races), loaded through
// XAL_OPENCL_LIBRARY in place of libOpenCL.so.1. XAL_FAKE_OPENCL_MODE picks
// what it reports:
//   no_platform    clGetPlatformIDs: CL_PLATFORM_NOT_FOUND_KHR
//   no_device      one platform "Fake Platform" without devices
//   context_fails  one GPU device; clCreateContext: CL_OUT_OF_HOST_MEMORY
//   command_fails  one GPU device whose queues take markers, barriers and
//                  copies; every command ends with CL_OUT_OF_RESOURCES while
//                  clFinish succeeds, and clWaitForEvents on one gives
//                  CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST
//   enqueue_race   as command_fails, but the first command of a context is
//                  CL_COMPLETE and later ones stay CL_RUNNING; the first
//                  marker or barrier returns only once clFlush has been
//                  called (or after a second), so that a second thread's
//                  whole submission runs inside the first one's enqueue
//   gates          as command_fails, but commands complete, event callbacks
//                  run at once, buffers and user events exist, and a
//                  clReleaseMemObject while a user event is unset (undefined
//                  per clSetUserEventStatus) is counted; the tests read the
//                  counts through xal_fake_opencl_counts()
//   two_platforms  as gates, with two platforms of one device each (two
//                  contexts), for the cross-platform wait bridge
// Buffers and queues are objects that know their context (and device),
// counted by clRetain*/clRelease*, for the imports: clGetMemObjectInfo and
// clGetCommandQueueInfo answer for live ones only (CL_INVALID_MEM_OBJECT,
// CL_INVALID_COMMAND_QUEUE otherwise), and xal_fake_opencl_refs(object)
// gives a live one's count (-1 for anything else). A queue made with
// CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE says so.
// In gates and two_platforms, xal_fake_opencl_set(knob, n) changes what
// comes next (all 0 at each clCreateContext):
//   fail_commands  the next n commands end with CL_OUT_OF_RESOURCES
//   fail_enqueue   the nth enqueue from now (1: the next) returns
//                  CL_OUT_OF_HOST_MEMORY and makes no command
//   hold_commands  1: new commands stay CL_RUNNING until clFinish (or the
//                  knob complete_all) ends them
//   complete_all   (any n) ends the held commands, then runs the deferred
//                  callbacks
//   defer_callbacks 1: clSetEventCallback keeps the callback for
//                  complete_all instead of running it at once
//   fail_flushes   the next n clFlush return CL_OUT_OF_RESOURCES
//   fail_finishes  the next n clFinish return CL_OUT_OF_RESOURCES
//   fail_releases  the next n clReleaseMemObject return CL_OUT_OF_RESOURCES
//                  and release nothing
//   release_waits  1: the next clReleaseMemObject first waits (a second at
//                  most) for a clCreateUserEvent, so that a gate created
//                  while a buffer is released shows in the counts
// Every other function (fake_opencl_stubs.cpp) returns CL_INVALID_OPERATION.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#define FAKE_EXPORT __attribute__((visibility("default")))

namespace {

std::string mode() {
  const char* m = std::getenv("XAL_FAKE_OPENCL_MODE");
  return m != nullptr ? m : "";
}

// Fake handles: addresses of statics, never dereferenced by the caller.
// Two of each for two_platforms (index 0 otherwise).
int g_platform[2];
int g_device[2];
int g_context[2];

bool runs_commands() {
  const std::string m = mode();
  return m == "command_fails" || m == "enqueue_race" || m == "gates" || m == "two_platforms";
}

// Commands complete and resources are counted (gates, two_platforms).
bool gates_like() {
  const std::string m = mode();
  return m == "gates" || m == "two_platforms";
}

int platform_count() { return mode() == "two_platforms" ? 2 : 1; }

}  // namespace

// A buffer and a queue: what the imports ask of them, reference counted.
struct _cl_mem {
  cl_context context = nullptr;
  size_t size = 0;
  int refs = 1;  // under g_mutex
};
struct _cl_command_queue {
  cl_context context = nullptr;
  cl_device_id device = nullptr;
  cl_command_queue_properties properties = 0;
  int refs = 1;  // under g_mutex; released queues are kept (never freed)
};

// A command's event, reference counted.
struct _cl_event {
  std::atomic<int> refs{1};
  std::atomic<cl_int> status{CL_COMPLETE};
  cl_int final_status = CL_COMPLETE;  // once a held command ends
};

namespace {

// enqueue_race: commands created since the context, and clFlush calls.
std::mutex g_mutex;
std::condition_variable g_flushed;
int g_commands = 0;
int g_flushes = 0;
// gates: user events not yet set, live buffers, releases while one was
// unset, releases waiting for a user event (release_waits), user events
// created.
int g_unset_user_events = 0;
int g_live_buffers = 0;
int g_bad_releases = 0;
int g_waiting_releases = 0;
int g_user_events_created = 0;
std::condition_variable g_user_event_created;
// Live buffers and queues (under g_mutex).
std::set<cl_mem> g_buffers;
std::set<cl_command_queue> g_queues;
// Released queues are kept (a late query on one must not touch freed
// memory) until the library is unloaded, which frees every queue.
std::vector<cl_command_queue> g_released_queues;
struct QueueReaper {
  ~QueueReaper() {
    for (cl_command_queue q : g_released_queues) delete q;
    for (cl_command_queue q : g_queues) delete q;
  }
} g_queue_reaper;

// The knobs of xal_fake_opencl_set, under g_mutex.
struct Knobs {
  int fail_commands = 0;
  int fail_enqueue = 0;
  bool hold_commands = false;
  bool defer_callbacks = false;
  int fail_flushes = 0;
  int fail_finishes = 0;
  int fail_releases = 0;
  bool release_waits = false;
};
Knobs g_knobs;
std::vector<cl_event> g_held;  // held commands, one reference each
struct Deferred {
  void(CL_CALLBACK* fn)(cl_event, cl_int, void*);
  cl_event ev;  // one reference
  void* user;
};
std::vector<Deferred> g_deferred;

// Counts down a "next n" knob under g_mutex; true when it fires.
bool take(int& knob) {
  if (knob <= 0) return false;
  --knob;
  return true;
}

void release_event(cl_event ev) {
  if (ev->refs.fetch_sub(1) == 1) delete ev;
}

// Ends the held commands, then runs the deferred callbacks (outside the
// lock: they call back into the library).
void complete_all() {
  std::vector<cl_event> held;
  std::vector<Deferred> deferred;
  {
    std::lock_guard lock(g_mutex);
    held.swap(g_held);
    deferred.swap(g_deferred);
  }
  for (cl_event ev : held) {
    ev->status = ev->final_status;
    release_event(ev);
  }
  for (const Deferred& d : deferred) {
    d.fn(d.ev, d.ev->status, d.user);
    release_event(d.ev);
  }
}

// gates: an enqueue. CL_OUT_OF_HOST_MEMORY (and no command) when the
// fail_enqueue knob says so.
cl_int gates_command(cl_event* out) {
  cl_int status = CL_COMPLETE;
  bool hold = false;
  {
    std::lock_guard lock(g_mutex);
    if (g_knobs.fail_enqueue > 0 && --g_knobs.fail_enqueue == 0) return CL_OUT_OF_HOST_MEMORY;
    if (take(g_knobs.fail_commands)) status = CL_OUT_OF_RESOURCES;
    hold = g_knobs.hold_commands;
  }
  auto* ev = new _cl_event;
  ev->final_status = status;
  ev->status = hold ? CL_RUNNING : status;
  if (hold) {
    ev->refs.fetch_add(1);
    std::lock_guard lock(g_mutex);
    g_held.push_back(ev);
  }
  if (out != nullptr) {
    *out = ev;
  } else {
    release_event(ev);
  }
  return CL_SUCCESS;
}

cl_int new_command(cl_event* out) {
  if (gates_like()) return gates_command(out);
  auto* ev = new _cl_event;
  int index = 0;
  {
    std::lock_guard lock(g_mutex);
    index = g_commands++;
  }
  if (mode() == "command_fails") {
    ev->status = CL_OUT_OF_RESOURCES;
  } else {
    ev->status = index == 0 ? CL_COMPLETE : CL_RUNNING;
    if (index == 0) {
      std::unique_lock lock(g_mutex);
      g_flushed.wait_for(lock, std::chrono::seconds(1), [] { return g_flushes > 0; });
    }
  }
  if (out != nullptr) {
    *out = ev;
  } else {
    delete ev;
  }
  return CL_SUCCESS;
}

cl_int put_string(const char* text, size_t size, void* value, size_t* size_ret) {
  const size_t n = std::strlen(text) + 1;
  if (size_ret != nullptr) *size_ret = n;
  if (value != nullptr) {
    if (size < n) return CL_INVALID_VALUE;
    std::memcpy(value, text, n);
  }
  return CL_SUCCESS;
}

template <typename T>
cl_int put_value(T v, size_t size, void* value, size_t* size_ret) {
  if (size_ret != nullptr) *size_ret = sizeof(T);
  if (value != nullptr) {
    if (size < sizeof(T)) return CL_INVALID_VALUE;
    std::memcpy(value, &v, sizeof(T));
  }
  return CL_SUCCESS;
}

}  // namespace

extern "C" {

FAKE_EXPORT cl_int CL_API_CALL clGetPlatformIDs(cl_uint n, cl_platform_id* out,
                                                cl_uint* count) {
  if (mode() == "no_platform") return CL_PLATFORM_NOT_FOUND_KHR;
  const int platforms = platform_count();
  if (count != nullptr) *count = static_cast<cl_uint>(platforms);
  for (int i = 0; out != nullptr && i < platforms && static_cast<cl_uint>(i) < n; ++i) {
    out[i] = reinterpret_cast<cl_platform_id>(&g_platform[i]);
  }
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id, cl_platform_info param,
                                                 size_t size, void* value, size_t* size_ret) {
  switch (param) {
    case CL_PLATFORM_NAME: return put_string("Fake Platform", size, value, size_ret);
    case CL_PLATFORM_VENDOR: return put_string("xal tests", size, value, size_ret);
    case CL_PLATFORM_VERSION: return put_string("OpenCL 1.2 fake", size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

FAKE_EXPORT cl_int CL_API_CALL clGetDeviceIDs(cl_platform_id platform, cl_device_type, cl_uint n,
                                              cl_device_id* out, cl_uint* count) {
  if (mode() == "no_device") return CL_DEVICE_NOT_FOUND;
  const int index = platform == reinterpret_cast<cl_platform_id>(&g_platform[1]) ? 1 : 0;
  if (count != nullptr) *count = 1;
  if (out != nullptr && n > 0) out[0] = reinterpret_cast<cl_device_id>(&g_device[index]);
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetDeviceInfo(cl_device_id, cl_device_info param, size_t size,
                                               void* value, size_t* size_ret) {
  switch (param) {
    case CL_DEVICE_NAME: return put_string("Fake GPU", size, value, size_ret);
    case CL_DEVICE_VENDOR: return put_string("xal tests", size, value, size_ret);
    case CL_DEVICE_VERSION: return put_string("OpenCL 1.2", size, value, size_ret);
    case CL_DRIVER_VERSION: return put_string("0.1", size, value, size_ret);
    case CL_DEVICE_EXTENSIONS: return put_string("", size, value, size_ret);
    case CL_DEVICE_TYPE: return put_value<cl_device_type>(CL_DEVICE_TYPE_GPU, size, value, size_ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS: return put_value<cl_uint>(8, size, value, size_ret);
    case CL_DEVICE_MAX_CLOCK_FREQUENCY: return put_value<cl_uint>(1000, size, value, size_ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE: return put_value<cl_ulong>(1ull << 30, size, value, size_ret);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE: return put_value<cl_ulong>(1ull << 28, size, value, size_ret);
    case CL_DEVICE_MEM_BASE_ADDR_ALIGN: return put_value<cl_uint>(1024, size, value, size_ret);
    case CL_DEVICE_QUEUE_PROPERTIES:
      return put_value<cl_command_queue_properties>(CL_QUEUE_PROFILING_ENABLE, size, value,
                                                    size_ret);
    default: return CL_INVALID_VALUE;
  }
}

FAKE_EXPORT cl_context CL_API_CALL clCreateContext(const cl_context_properties*, cl_uint,
                                                   const cl_device_id* devices,
                                                   void(CL_CALLBACK*)(const char*, const void*,
                                                                      size_t, void*),
                                                   void*, cl_int* rc) {
  if (runs_commands()) {
    const int index = devices[0] == reinterpret_cast<cl_device_id>(&g_device[1]) ? 1 : 0;
    std::lock_guard lock(g_mutex);
    if (index == 0) {  // a new instance
      g_commands = 0;
      g_flushes = 0;
      g_unset_user_events = 0;
      g_live_buffers = 0;
      g_bad_releases = 0;
      g_waiting_releases = 0;
      g_user_events_created = 0;
      g_knobs = Knobs{};
    }
    if (rc != nullptr) *rc = CL_SUCCESS;
    return reinterpret_cast<cl_context>(&g_context[index]);
  }
  if (rc != nullptr) *rc = CL_OUT_OF_HOST_MEMORY;
  return nullptr;
}

FAKE_EXPORT cl_int CL_API_CALL clReleaseContext(cl_context) { return CL_SUCCESS; }

FAKE_EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(
    cl_context context, cl_device_id device, cl_command_queue_properties properties,
    cl_int* rc) {
  auto* queue = new _cl_command_queue{context, device, properties, 1};
  {
    std::lock_guard lock(g_mutex);
    g_queues.insert(queue);
  }
  if (rc != nullptr) *rc = CL_SUCCESS;
  return queue;
}

FAKE_EXPORT cl_int CL_API_CALL clRetainCommandQueue(cl_command_queue queue) {
  std::lock_guard lock(g_mutex);
  if (g_queues.count(queue) == 0) return CL_INVALID_COMMAND_QUEUE;
  ++queue->refs;
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clReleaseCommandQueue(cl_command_queue queue) {
  std::lock_guard lock(g_mutex);
  if (g_queues.count(queue) == 0) return CL_INVALID_COMMAND_QUEUE;
  if (--queue->refs == 0) {
    g_queues.erase(queue);
    g_released_queues.push_back(queue);
  }
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetCommandQueueInfo(cl_command_queue queue,
                                                     cl_command_queue_info param, size_t size,
                                                     void* value, size_t* size_ret) {
  std::lock_guard lock(g_mutex);
  if (g_queues.count(queue) == 0) return CL_INVALID_COMMAND_QUEUE;
  switch (param) {
    case CL_QUEUE_CONTEXT: return put_value(queue->context, size, value, size_ret);
    case CL_QUEUE_DEVICE: return put_value(queue->device, size, value, size_ret);
    case CL_QUEUE_PROPERTIES: return put_value(queue->properties, size, value, size_ret);
    case CL_QUEUE_REFERENCE_COUNT:
      return put_value(static_cast<cl_uint>(queue->refs), size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}
// Ends the held commands (of every queue: one is enough for the tests).
FAKE_EXPORT cl_int CL_API_CALL clFinish(cl_command_queue) {
  {
    std::lock_guard lock(g_mutex);
    if (take(g_knobs.fail_finishes)) return CL_OUT_OF_RESOURCES;
  }
  if (gates_like()) complete_all();
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clFlush(cl_command_queue) {
  {
    std::lock_guard lock(g_mutex);
    if (take(g_knobs.fail_flushes)) return CL_OUT_OF_RESOURCES;
    ++g_flushes;
  }
  g_flushed.notify_all();
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clEnqueueMarkerWithWaitList(cl_command_queue, cl_uint,
                                                           const cl_event*, cl_event* out) {
  return new_command(out);
}

FAKE_EXPORT cl_int CL_API_CALL clEnqueueBarrierWithWaitList(cl_command_queue, cl_uint,
                                                            const cl_event*, cl_event* out) {
  return new_command(out);
}

// Copies move no data: buffers have no contents here.
FAKE_EXPORT cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue, cl_mem, cl_bool, size_t,
                                                   size_t, void*, cl_uint, const cl_event*,
                                                   cl_event* out) {
  return new_command(out);
}

FAKE_EXPORT cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue, cl_mem, cl_bool, size_t,
                                                    size_t, const void*, cl_uint,
                                                    const cl_event*, cl_event* out) {
  return new_command(out);
}

FAKE_EXPORT cl_int CL_API_CALL clEnqueueCopyBuffer(cl_command_queue, cl_mem, cl_mem, size_t,
                                                   size_t, size_t, cl_uint, const cl_event*,
                                                   cl_event* out) {
  return new_command(out);
}

FAKE_EXPORT cl_int CL_API_CALL clRetainEvent(cl_event ev) {
  ev->refs.fetch_add(1);
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clReleaseEvent(cl_event ev) {
  release_event(ev);
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetEventInfo(cl_event ev, cl_event_info param, size_t size,
                                              void* value, size_t* size_ret) {
  if (param != CL_EVENT_COMMAND_EXECUTION_STATUS) return CL_INVALID_VALUE;
  return put_value<cl_int>(ev->status, size, value, size_ret);
}

FAKE_EXPORT cl_event CL_API_CALL clCreateUserEvent(cl_context, cl_int* rc) {
  auto* ev = new _cl_event;
  ev->status = CL_SUBMITTED;
  {
    std::lock_guard lock(g_mutex);
    ++g_unset_user_events;
    ++g_user_events_created;
  }
  g_user_event_created.notify_all();
  if (rc != nullptr) *rc = CL_SUCCESS;
  return ev;
}

FAKE_EXPORT cl_int CL_API_CALL clSetUserEventStatus(cl_event ev, cl_int status) {
  ev->status = status;
  std::lock_guard lock(g_mutex);
  --g_unset_user_events;
  return CL_SUCCESS;
}

// Commands are complete when enqueued: the callback runs at once, unless
// defer_callbacks keeps it for complete_all.
FAKE_EXPORT cl_int CL_API_CALL clSetEventCallback(cl_event ev, cl_int,
                                                  void(CL_CALLBACK* fn)(cl_event, cl_int, void*),
                                                  void* user) {
  {
    std::lock_guard lock(g_mutex);
    if (g_knobs.defer_callbacks) {
      ev->refs.fetch_add(1);
      g_deferred.push_back(Deferred{fn, ev, user});
      return CL_SUCCESS;
    }
  }
  fn(ev, ev->status, user);
  return CL_SUCCESS;
}

FAKE_EXPORT cl_mem CL_API_CALL clCreateBuffer(cl_context context, cl_mem_flags, size_t size,
                                              void*, cl_int* rc) {
  auto* mem = new _cl_mem{context, size, 1};
  {
    std::lock_guard lock(g_mutex);
    ++g_live_buffers;
    g_buffers.insert(mem);
  }
  if (rc != nullptr) *rc = CL_SUCCESS;
  return mem;
}

FAKE_EXPORT cl_int CL_API_CALL clRetainMemObject(cl_mem mem) {
  std::lock_guard lock(g_mutex);
  if (g_buffers.count(mem) == 0) return CL_INVALID_MEM_OBJECT;
  ++mem->refs;
  return CL_SUCCESS;
}

FAKE_EXPORT cl_int CL_API_CALL clGetMemObjectInfo(cl_mem mem, cl_mem_info param, size_t size,
                                                  void* value, size_t* size_ret) {
  std::lock_guard lock(g_mutex);
  if (g_buffers.count(mem) == 0) return CL_INVALID_MEM_OBJECT;
  switch (param) {
    case CL_MEM_TYPE:
      return put_value<cl_mem_object_type>(CL_MEM_OBJECT_BUFFER, size, value, size_ret);
    case CL_MEM_CONTEXT: return put_value(mem->context, size, value, size_ret);
    case CL_MEM_SIZE: return put_value(mem->size, size, value, size_ret);
    case CL_MEM_REFERENCE_COUNT:
      return put_value(static_cast<cl_uint>(mem->refs), size, value, size_ret);
    default: return CL_INVALID_VALUE;
  }
}

// The reference count of a live buffer or queue, else -1.
FAKE_EXPORT int xal_fake_opencl_refs(const void* object) {
  std::lock_guard lock(g_mutex);
  for (cl_mem mem : g_buffers) {
    if (mem == object) return mem->refs;
  }
  for (cl_command_queue queue : g_queues) {
    if (queue == object) return queue->refs;
  }
  return -1;
}

FAKE_EXPORT cl_int CL_API_CALL clReleaseMemObject(cl_mem mem) {
  std::unique_lock lock(g_mutex);
  if (take(g_knobs.fail_releases)) return CL_OUT_OF_RESOURCES;
  if (g_knobs.release_waits) {
    g_knobs.release_waits = false;
    ++g_waiting_releases;
    const int created = g_user_events_created;
    g_user_event_created.wait_for(lock, std::chrono::seconds(1),
                                  [created] { return g_user_events_created != created; });
    --g_waiting_releases;
  }
  if (g_buffers.count(mem) == 0) return CL_INVALID_MEM_OBJECT;
  if (g_unset_user_events > 0) ++g_bad_releases;
  if (--mem->refs > 0) return CL_SUCCESS;
  g_buffers.erase(mem);
  delete mem;
  --g_live_buffers;
  return CL_SUCCESS;
}

// gates: {user events not yet set, live buffers, buffer releases made while
// a user event was unset, releases waiting for a user event}.
FAKE_EXPORT void xal_fake_opencl_counts(int* out) {
  std::lock_guard lock(g_mutex);
  out[0] = g_unset_user_events;
  out[1] = g_live_buffers;
  out[2] = g_bad_releases;
  out[3] = g_waiting_releases;
}

// Sets a knob (see the top of this file); returns false for an unknown one.
FAKE_EXPORT bool xal_fake_opencl_set(const char* knob, int n) {
  const std::string k = knob;
  if (k == "complete_all") {
    complete_all();
    return true;
  }
  std::lock_guard lock(g_mutex);
  if (k == "fail_commands") g_knobs.fail_commands = n;
  else if (k == "fail_enqueue") g_knobs.fail_enqueue = n;
  else if (k == "hold_commands") g_knobs.hold_commands = n != 0;
  else if (k == "defer_callbacks") g_knobs.defer_callbacks = n != 0;
  else if (k == "fail_flushes") g_knobs.fail_flushes = n;
  else if (k == "fail_finishes") g_knobs.fail_finishes = n;
  else if (k == "fail_releases") g_knobs.fail_releases = n;
  else if (k == "release_waits") g_knobs.release_waits = n != 0;
  else return false;
  return true;
}

FAKE_EXPORT cl_int CL_API_CALL clWaitForEvents(cl_uint n, const cl_event* list) {
  for (cl_uint i = 0; i < n; ++i) {
    if (list[i]->status < 0) return CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST;
  }
  return CL_SUCCESS;
}

}  // extern "C"
