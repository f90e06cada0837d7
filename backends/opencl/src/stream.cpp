// Streams: in-order command queues with profiling; host functions.
#include "backend.h"
#include "entries.h"

#include <vector>

namespace xal::opencl {
namespace {

// A host function in flight: the marker that says the stream reached it,
// and the user event that holds the stream's later work back until fn
// has returned.
struct HostFuncTask {
  const ClApi* api = nullptr;
  HostWorker* worker = nullptr;
  void (*fn)(void*) = nullptr;
  void* user = nullptr;
  cl_event gate = nullptr;    // user event
  cl_event marker = nullptr;
};

void run_task(std::unique_ptr<HostFuncTask> task) {
  task->fn(task->user);
  task->api->clSetUserEventStatus(task->gate, CL_COMPLETE);
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

}  // namespace

void remember(xal_bstream_s& stream, cl_event ev) {
  if (ev == nullptr) return;
  cl_event old = nullptr;
  {
    std::lock_guard lock(stream.last_mutex);
    old = stream.last;
    stream.last = ev;
  }
  if (old != nullptr) stream.device->backend->api().clReleaseEvent(old);
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
    release_stream(*owned);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(s, "stream_synchronize", [&]() -> xal_status_t {
    const cl_int rc = stream->device->backend->api().clFinish(stream->queue);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFinish");
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(s, "stream_query", [&]() -> xal_status_t {
    const ClApi& api = stream->device->backend->api();
    cl_event last = nullptr;
    {
      std::lock_guard lock(stream->last_mutex);
      last = stream->last;
      if (last != nullptr) api.clRetainEvent(last);
    }
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
    std::vector<cl_command_queue> queues;
    b->streams.for_each([&](xal_bstream_s& s) {
      if (s.device == device && api.clRetainCommandQueue(s.queue) == CL_SUCCESS) {
        queues.push_back(s.queue);
      }
    });
    cl_int first = CL_SUCCESS;
    for (cl_command_queue q : queues) {
      const cl_int rc = api.clFinish(q);
      if (first == CL_SUCCESS) first = rc;
      api.clReleaseCommandQueue(q);
    }
    const cl_int rc = api.clFinish(device->internal_queue);
    if (first == CL_SUCCESS) first = rc;
    return first == CL_SUCCESS ? XAL_SUCCESS : report_cl(b->services, first, "clFinish");
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
    task->fn = fn;
    task->user = user;
    cl_int rc = CL_SUCCESS;
    task->gate = api.clCreateUserEvent(stream->device->context, &rc);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateUserEvent");
    rc = api.clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, &task->marker);
    if (rc != CL_SUCCESS) {
      api.clSetUserEventStatus(task->gate, CL_COMPLETE);
      api.clReleaseEvent(task->gate);
      return report_cl(s, rc, "clEnqueueMarkerWithWaitList");
    }
    // Later work waits for the gate, which the worker opens after fn.
    cl_event barrier = nullptr;
    rc = api.clEnqueueBarrierWithWaitList(stream->queue, 1, &task->gate, &barrier);
    if (rc != CL_SUCCESS) {
      api.clSetUserEventStatus(task->gate, CL_COMPLETE);
      api.clReleaseEvent(task->gate);
      api.clReleaseEvent(task->marker);
      return report_cl(s, rc, "clEnqueueBarrierWithWaitList");
    }
    HostFuncTask* raw = task.get();
    rc = api.clSetEventCallback(raw->marker, CL_COMPLETE, on_marker, raw);
    if (rc != CL_SUCCESS) {
      // Never leave the queue blocked on a gate nobody opens.
      api.clReleaseEvent(barrier);
      api.clSetUserEventStatus(task->gate, CL_COMPLETE);
      api.clReleaseEvent(task->gate);
      api.clReleaseEvent(task->marker);
      return report_cl(s, rc, "clSetEventCallback");
    }
    task.release();  // owned by the callback now
    remember(*stream, barrier);
    rc = api.clFlush(stream->queue);
    return rc == CL_SUCCESS ? XAL_SUCCESS : report_cl(s, rc, "clFlush");
  });
}

}  // namespace xal::opencl
