// Teardown of devices and of the runtime.
#include "teardown.hpp"

#include "comm.hpp"
#include "host_memory.hpp"
#include "loader.hpp"
#include "partition.hpp"
#include "peer_copy.hpp"
#include "quota_shared.hpp"
#include "stream_failures.hpp"
#include "trace.hpp"

namespace xal::core {

void abort_device_comms(Runtime& rt, DeviceObj* device) noexcept {
  try {
    std::lock_guard lock(rt.comms_mu);
    for (CommObj* c : rt.comms) {
      const DeviceState& st = *c->device->state;
      if (c->device == device || (st.partition && st.partition->parent == device)) {
        (void)c->impl->abort();
      }
    }
  } catch (...) {
  }
}

void release_device_objects(DeviceObj* device) noexcept {
  try {
    DeviceState& st = *device->state;
    const xal_backend_table_t* t = device->hdr.table;
    std::unordered_set<StreamObj*> streams;
    std::unordered_set<EventObj*> events;
    std::unordered_set<ModuleObj*> modules;
    {
      std::lock_guard lock(st.mu);
      streams.swap(st.streams);
      events.swap(st.events);
      modules.swap(st.modules);
    }
    for (ModuleObj* m : modules) {
      for (KernelObj* k : m->kernels) destroy_handle(k);
      if (t->module_unload) t->module_unload(m->native);
      destroy_handle(m);
    }
    // A release the backend refuses is tried once more: after a sticky
    // error the first attempt reports it and the second releases
    // (xal_backend.h, Releases).
    for (EventObj* e : events) {
      if (destroy_native_event(e) != XAL_SUCCESS) destroy_native_event(e);
      destroy_handle(e);
    }
    for (StreamObj* s : streams) {
      if (t->stream_destroy(s->native) != XAL_SUCCESS) t->stream_destroy(s->native);
      forget_stream_failure(s->native);
      if (trace_on()) trace::stream_released(s);
      destroy_handle(s);
    }
    // The core's staging stream, taken once the streams are gone: a staged
    // copy queued on one of them (its gate, a host function, runs while the
    // stream is destroyed) may have made it meanwhile.
    xal_bstream_t* staging = nullptr;
    {
      std::lock_guard lock(st.mu);
      staging = st.staging_stream;
      st.staging_stream = nullptr;
    }
    if (staging && t->stream_destroy(staging) != XAL_SUCCESS) t->stream_destroy(staging);
    std::map<uint64_t, DeviceState::Foreign> foreign;
    {
      std::lock_guard lock(st.foreign_mu);
      foreign.swap(st.foreign);
    }
    for (const auto& r : st.registry.snapshot()) {
      const auto f = foreign.find(r.base);
      if (f == foreign.end()) {
        if (t->mem_free(device->native, r.base) != XAL_SUCCESS) t->mem_free(device->native, r.base);
      } else if (f->second.ipc) {
        if (t->mem_ipc_close) t->mem_ipc_close(device->native, r.base);
      } else if (t->mem_import_release) {
        t->mem_import_release(device->native, r.base);
      }
    }
    st.registry.clear();
    st.reserved.store(0);
    shared_quota_reset(device);
    st.counters.alloc_bytes_current.store(0);
    st.counters.alloc_count_current.store(0);
    st.resets.fetch_add(1);
  } catch (...) {
  }
  clear_pending();
}

void destroy_runtime(Runtime* rt) noexcept {
  if (!rt) return;
  std::unique_ptr<Runtime> owner(rt);
  try {
    if (rt->peer) rt->peer->drain();
    {
      std::unordered_set<CommObj*> comms;
      {
        std::lock_guard lock(rt->comms_mu);
        comms.swap(rt->comms);
      }
      // Aborted first: a collective still waiting for a rank that will
      // never call would otherwise hold its stream, and the streams'
      // destruction below, until the communicator's timeout.
      for (CommObj* c : comms) (void)c->impl->abort();
      for (CommObj* c : comms) {
        c->impl.reset();
        destroy_handle(c);
      }
    }
    for (DeviceObj* d : rt->devices) release_device_objects(d);
    if (rt->host) rt->host->release_all();
    rt->peer.reset();
    rt->host.reset();
    for (DeviceObj* d : rt->devices) destroy_handle(d);
    rt->devices.clear();
    // Wrappers first (they shut down what they wrap), then the rest.
    for (auto it = rt->backends.rbegin(); it != rt->backends.rend(); ++it)
      close_backend(**it);
    for (auto& b : rt->extra) close_backend(*b);
  } catch (...) {
  }
  clear_pending();
}

}  // namespace xal::core
