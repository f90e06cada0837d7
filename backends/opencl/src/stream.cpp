// Streams: in-order command queues with profiling; host functions.
#include "backend.h"
#include "entries.h"

#include <memory>
#include <utility>
#include <vector>

namespace xal::opencl {
namespace {

// A host function in flight: the marker that says the stream reached it,
// and the user event that holds the stream's later work back until fn
// has returned. Owned by the marker's callback once that is set, then by
// the worker's queue; it touches only what it shares, never the stream or
// the instance, which may be gone when a late callback runs.
struct HostFuncTask {
  std::shared_ptr<CallbackShared> shared;
  std::shared_ptr<HostWorker> worker;
  void (*fn)(void*) = nullptr;
  void* user = nullptr;
  cl_event gate = nullptr;    // user event, counted by shared->releases
  cl_event marker = nullptr;  // a reference of the task's own

  // Opens the gate and drops the task's events.
  void finish() {
    const ClApi& api = shared->api;
    api.clSetUserEventStatus(gate, CL_COMPLETE);
    shared->releases.gate_set(api);
    api.clReleaseEvent(gate);
    if (marker != nullptr) api.clReleaseEvent(marker);
  }
};

void run_task(std::unique_ptr<HostFuncTask> task) {
  task->fn(task->user);
  task->finish();
}

// Runs on an OpenCL runtime thread: hands the work to the stream's worker
// so that fn never blocks the runtime. When the worker was stopped (the
// stream was released although its clFinish failed, see release_stream)
// fn is not run: only the gate is opened.
void CL_CALLBACK on_marker(cl_event, cl_int, void* data) {
  auto* raw = static_cast<HostFuncTask*>(data);
  const std::shared_ptr<HostWorker> worker = raw->worker;  // alive through post
  bool posted = false;
  try {
    posted = worker->post([raw] { run_task(std::unique_ptr<HostFuncTask>(raw)); });
  } catch (...) {
    posted = false;  // out of memory: abandoned as below
  }
  if (!posted) std::unique_ptr<HostFuncTask>(raw)->finish();
}

// The name of a stream's failure for report_cl.
constexpr const char* kCommandFailed = "a command of the stream failed";

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
  api.clFinish(stream.queue);  // also waits for host functions (their gates)
  // Runs what was posted; a marker that completes later finds it stopped.
  if (stream.worker) stream.worker->stop();
  stream.worker.reset();
  stream.log.reset();  // a device_synchronize may still hold it
  api.clReleaseCommandQueue(stream.queue);
  stream.queue = nullptr;
}

xal_status_t stream_create(xal_bdevice_t* device, uint32_t flags, xal_bstream_t** out) {
  const xal_backend_services_t* s = device->backend->services;
  return guarded(Entry{s}, "stream_create", [&]() -> xal_status_t {
    (void)flags;  // every OpenCL queue is independent of the others
    const ClApi& api = device->backend->api();
    cl_int rc = CL_SUCCESS;
    const cl_command_queue_properties props =
        device->info.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
    auto stream = std::make_unique<xal_bstream_s>();
    stream->device = device;
    stream->log = std::make_shared<CommandLog>(api);
    stream->queue = api.clCreateCommandQueue(device->context, device->id, props, &rc);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateCommandQueue");
    *out = device->backend->streams.add(std::move(stream));
    return XAL_SUCCESS;
  });
}

xal_status_t stream_destroy(xal_bstream_t* stream) {
  xal_backend_s* b = stream->device->backend;
  return guarded(Entry{b->services}, "stream_destroy", [&]() -> xal_status_t {
    std::unique_ptr<xal_bstream_s> owned = b->streams.remove(stream);
    if (!owned) return report(b->services, XAL_ERROR_INVALID_HANDLE, "stream_destroy: unknown stream");
    // A command that failed and was not yet reported is reported (a failing
    // clFinish is not: the stream is destroyed all the same, as it could
    // not be later).
    const cl_int failed =
        b->api().clFinish(owned->queue) == CL_SUCCESS ? owned->log->collect() : CL_SUCCESS;
    if (failed != CL_SUCCESS) {
      // The stream stays (the core keeps its handle for a retry); the
      // failure was reported, hence cleared, so the retry destroys it.
      b->streams.add(std::move(owned));
      return report_cl(b->services, failed, "stream_destroy", kCommandFailed);
    }
    release_stream(*owned);
    return XAL_SUCCESS;
  });
}

xal_status_t stream_synchronize(xal_bstream_t* stream) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(Entry{s}, "stream_synchronize", [&]() -> xal_status_t {
    const cl_int rc = stream->device->backend->api().clFinish(stream->queue);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clFinish", "stream_synchronize");
    const cl_int failed = stream->log->collect();
    return failed == CL_SUCCESS ? XAL_SUCCESS
                                : report_cl(s, failed, "stream_synchronize", kCommandFailed);
  });
}

xal_status_t stream_query(xal_bstream_t* stream) {
  const xal_backend_services_t* s = stream->device->backend->services;
  return guarded(Entry{s}, "stream_query", [&]() -> xal_status_t {
    bool busy = false;
    const cl_int failed = stream->log->collect(&busy);
    if (failed != CL_SUCCESS) return report_cl(s, failed, "stream_query", kCommandFailed);
    return busy ? XAL_NOT_READY : XAL_SUCCESS;
  });
}

xal_status_t device_synchronize(xal_bdevice_t* device) {
  xal_backend_s* b = device->backend;
  return guarded(Entry{b->services}, "device_synchronize", [&]() -> xal_status_t {
    const ClApi& api = b->api();
    // Each stream's queue (retained) and command log: a stream destroyed
    // meanwhile leaves both alive.
    std::vector<std::pair<cl_command_queue, std::shared_ptr<CommandLog>>> queues;
    b->streams.for_each([&](xal_bstream_s& s) {
      if (s.device == device && api.clRetainCommandQueue(s.queue) == CL_SUCCESS) {
        queues.emplace_back(s.queue, s.log);
      }
    });
    // The first failure is reported; those of the other streams are
    // cleared with it (one report per call).
    cl_int first = CL_SUCCESS;
    for (const auto& [q, log] : queues) {
      cl_int rc = api.clFinish(q);
      if (rc == CL_SUCCESS) rc = log->collect();
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
  return guarded(Entry{s}, "stream_enqueue_host_func", [&]() -> xal_status_t {
    if (fn == nullptr) return report(s, XAL_ERROR_INVALID_ARGUMENT, "host func is NULL");
    xal_backend_s& b = *stream->device->backend;
    const ClApi& api = b.api();
    auto task = std::make_unique<HostFuncTask>();
    {
      std::lock_guard lock(stream->worker_mutex);
      if (!stream->worker) stream->worker = std::make_shared<HostWorker>();
      task->worker = stream->worker;
    }
    task->shared = b.shared;
    task->fn = fn;
    task->user = user;
    cl_int rc = CL_SUCCESS;
    task->gate = b.releases().create_gate(api, stream->device->context, &rc);
    if (rc != CL_SUCCESS) return report_cl(s, rc, "clCreateUserEvent");
    const char* failed = nullptr;
    rc = submit(*stream, [&](CommandLog::Batch& batch) {
      cl_event* marker = batch.next();
      cl_int r = api.clEnqueueMarkerWithWaitList(stream->queue, 0, nullptr, marker);
      if (r != CL_SUCCESS) {
        failed = "clEnqueueMarkerWithWaitList";
        return r;
      }
      api.clRetainEvent(*marker);
      task->marker = *marker;
      // Later work waits for the gate, which the worker opens after fn.
      r = api.clEnqueueBarrierWithWaitList(stream->queue, 1, &task->gate, batch.next());
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
      task->finish();
      return report_cl(s, rc, failed);
    }
    // fn is committed (it will run, and may free `user`): from here the
    // call succeeds, and a failing flush is the stream's failure, reported
    // by its next synchronize, query or destroy.
    rc = api.clFlush(stream->queue);
    if (rc != CL_SUCCESS) stream->log->fail(rc);
    return XAL_SUCCESS;
  });
}

}  // namespace xal::opencl
