// Streams: in-order command queues with profiling; host functions.
#include "backend.h"
#include "entries.h"

#include <utility>
#include <vector>

namespace xal::opencl {
namespace {

// A host function in flight: the marker that says the stream reached it,
// and the user event that holds the stream's later work back until fn
// has returned.
struct HostFuncTask {
  const ClApi* api = nullptr;
  HostWorker* worker = nullptr;
  DeferredReleases* releases = nullptr;
  void (*fn)(void*) = nullptr;
  void* user = nullptr;
  cl_event gate = nullptr;    // user event
  cl_event marker = nullptr;
};

void run_task(std::unique_ptr<HostFuncTask> task) {
  task->fn(task->user);
  task->api->clSetUserEventStatus(task->gate, CL_COMPLETE);
  task->releases->gate_set(*task->api);
  task->api->clReleaseEvent(task->gate);
  task->api->clReleaseEvent(task->marker);
}

// Runs on an OpenCL runtime thread: hands the work to the stream's worker
// so that fn never blocks the runtime.
void CL_CALLBACK on_marker(cl_event, cl_int, void* data) {
  auto* raw = static_cast<HostFuncTask*>(data);
  HostWorker* worker = raw->worker;
  worker->post([raw] { run_task(std::unique_ptr<HostFuncTask>(raw)); });
}

// The stream's last command, retained for use outside the lock (NULL if
// nothing was enqueued). The caller releases it.
cl_event retained_last(xal_bstream_s& stream) {
  std::lock_guard lock(stream.submit_mutex);
  if (stream.last != nullptr) stream.device->backend->api().clRetainEvent(stream.last);
  return stream.last;
}

// clFinish's error, else the error the command `last` (retained, may be
// NULL; released here) failed with. A command that failed is not reported
// by clFinish, only by its event's execution status.
cl_int finish(const ClApi& api, cl_command_queue queue, cl_event last) {
  cl_int rc = api.clFinish(queue);
  if (rc == CL_SUCCESS) rc = command_error(api, last);
  if (last != nullptr) api.clReleaseEvent(last);
  return rc;
}

}  // namespace

cl_int command_error(const ClApi& api, cl_event ev) {
  if (ev == nullptr) return CL_SUCCESS;
  cl_int status = CL_COMPLETE;
  const cl_int rc = api.clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status),
                                       &status, nullptr);
  return rc == CL_SUCCESS && status < 0 ? status : CL_SUCCESS;
}

void release_stream(xal_bstream_s& stream) {
  const ClApi& api = stream.device->backend->api();
  api.clFinish(stream.queue);  // also waits for host functions
  stream.worker.reset();
  if (stream.last != nullptr) api.clReleaseEvent(stream.last);
  stream.last = nullptr;
  api.clReleaseCommandQueue(stream.queue);
  stream.queue = nullptr;
}

xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags, xal_bstream_t** out) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(s, "stream_create", [&]() -> xal_status_t {
    (void)flags;  // every OpenCL queue is independent of the others
    const ClApi& api = device->backend->api();
    cl_int rc = CL_SUCCESS;
    const cl_command_queue_properties props =
        device->info.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    stream->queue = api.clCreateCommandQueue(device->context, device->id, props, &rc);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateCommandQueue");
    *out = device->backend->streams.add(std::move(stream));
    return XAL_SUCCESS;
  });
}

xal_status_t stream_destroy(xal_bstream_t* stream) {
  xal_backend_s* b = stream->device->backend;
  return guarded(b->services, "stream_destroy", [&]() -> xal_status_t {
    std::unique_ptr<xal_bstream_s> owned = b->streams.remove(stream);
    if (!owned) return report(b->services, XAL_ERROR_INVALID_HANDLE, "stream_destroy: unknown stream");
    const ClApi& api = b->api();
    // A command that failed is reported (a failing clFinish is not: the
    // stream is destroyed all the same, as it could not be later).
    cl_event last = retained_last(*owned);
    const cl_int failed =
        api.clFinish(owned->queue) == CL_SUCCESS ? command_error(api, last) : CL_SUCCESS;
    if (last != nullptr) api.clReleaseEvent(last);
    if (failed != CL_SUCCESS) {
      // The stream stays (the core keeps its handle for a retry); the
      // failure is reported once, so that the retry destroys it.
      cl_event failed_last = nullptr;
      {
        std::lock_guard lock(owned->submit_mutex);
        std::swap(failed_last, owned->last);
      }
      if (failed_last != nullptr) api.clReleaseEvent(failed_last);
      b->streams.add(std::move(owned));
      return report_cl(b->services, failed, "stream_destroy", "a command of the stream failed");
    }
    release_stream(*owned);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(s, "stream_synchronize", [&]() -> xal_status_t {
    const ClApi& api = stream->device->backend->api();
    const cl_int rc = finish(api, stream->queue, retained_last(*stream));
    return rc == CL_SUCCESS ? XAL_SUCCESS
                            : report_cl(s, rc, "stream_synchronize", "a command of the stream failed");
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(s, "stream_query", [&]() -> xal_status_t {
    const ClApi& api = stream->device->backend->api();
    cl_event last = retained_last(*stream);
    if (last == nullptr) return XAL_SUCCESS;  // nothing was ever enqueued
    cl_int status = CL_QUEUED;
    const cl_int rc = api.clGetEventInfo(last, CL_EVENT_COMMAND_EXECUTION_STATUS,
                                         sizeof(status), &status, nullptr);
    api.clReleaseEvent(last);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clGetEventInfo");
    if (status < 0) return report_cl(s, status, "stream_query", "a command of the stream failed");
    return status == CL_COMPLETE ? XAL_SUCCESS : XAL_NOT_READY;
  });
}

xal_status_t device_synchronize(xal_bdevice_t* device) {
  xal_backend_s* b = device->backend;
  return guarded(b->services, "device_synchronize", [&]() -> xal_status_t {
    const ClApi& api = b->api();
    // Each stream's queue and last command, retained.
    std::vector<std::pair<cl_command_queue, cl_event>> queues;
    b->streams.for_each([&](xal_bstream_s& s) {
      if (s.device == device && api.clRetainCommandQueue(s.queue) == CL_SUCCESS) {
        queues.emplace_back(s.queue, retained_last(s));
      }
    });
    cl_int first = CL_SUCCESS;
    for (auto [q, last] : queues) {
      const cl_int rc = finish(api, q, last);
      if (first == CL_SUCCESS) first = rc;
      api.clReleaseCommandQueue(q);
    }
    const cl_int rc = api.clFinish(device->internal_queue);
    if (first == CL_SUCCESS) first = rc;
    return first == CL_SUCCESS ? XAL_SUCCESS
                               : report_cl(b->services, first, "device_synchronize",
                                           "a command of the device failed");
  });
}

xal_status_t stream_enqueue_host_func(xal_bstream_t* stream, void (*fn)(void*), void* user) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(s, "stream_enqueue_host_func", [&]() -> xal_status_t {
    if (fn == nullptr) return report(s, XAL_ERROR_INVALID_ARGUMENT, "host func is NULL");
    const ClApi& api = stream->device->backend->api();
    HostWorker* worker = nullptr;
    {
      std::lock_guard lock(stream->worker_mutex);
      if (!stream->worker) stream->worker = std::make_unique<HostWorker>();
      worker = stream->worker.get();
    }
    auto task = std::make_unique<HostFuncTask>();
    task->api = &api;
    task->worker = worker;
    task->releases = &stream->device->backend->releases;
    task->fn = fn;
    task->user = user;
    cl_int rc = CL_SUCCESS;
    task->gate = api.clCreateUserEvent(stream->device->context, &rc);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateUserEvent");
    task->releases->gate_created();
    const char* failed = nullptr;
    rc = submit(*stream, [&](cl_event* barrier) {
      cl_int r = api.clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, &task->marker);
      if (r != CL_SUCCESS) {
        failed = "clEnqueueMarkerWithWaitList";
        return r;
      }
      // Later work waits for the gate, which the worker opens after fn.
      r = api.clEnqueueBarrierWithWaitList(stream->queue, 1, &task->gate, barrier);
      if (r != CL_SUCCESS) {
        failed = "clEnqueueBarrierWithWaitList";
        return r;
      }
      r = api.clSetEventCallback(task->marker, CL_COMPLETE, on_marker, task.get());
      if (r == CL_SUCCESS) {
        task.release();  // owned by the callback now
      } else {
        failed = "clSetEventCallback";
      }
      return r;
    });
    if (rc != CL_SUCCESS) {
      // Never leave the queue blocked on a gate nobody opens.
      api.clSetUserEventStatus(task->gate, CL_COMPLETE);
      task->releases->gate_set(api);
      api.clReleaseEvent(task->gate);
      if (task->marker != nullptr) api.clReleaseEvent(task->marker);
      return report_cl(s, rc, failed);
    }
    rc = api.clFlush(stream->queue);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFlush");
  });
}

}  // namespace xal::opencl
