// Communicators (create, destroy, abort, info) and group calls. A comm is
// one rank of a path: native (one backend's library) or the core's
// hierarchical path in src/collectives/ for mixed backends.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <numeric>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "collectives/hierarchical.hpp"
#include "comm.hpp"
#include "compute_share.hpp"
#include "error.hpp"
#include "runtime.hpp"
#include "xal_common/strings.hpp"

using namespace xal::core;

namespace {

constexpr uint32_t kDefaultTimeoutMs = 300000;

// This thread's open group: its depth, the runtime it was started in, and
// the work kept by defer_to_group_end in issue order, each with its key
// (a rank) and the handles of the collective that kept it.
struct Kept {
  const void* key;
  xal_comm_t comm;
  xal_stream_t stream;  // null: no stream (xal_comm_split)
  std::function<xal_status_t()> work;
  uint64_t serial;  // see last_kept_serial
};
std::atomic<uint64_t> g_kept_serial{0};
struct GroupState {
  int depth = 0;
  uint64_t epoch = 0;
  std::vector<Kept> deferred;
  // The serial of the last work kept per key and per stream (see
  // last_kept_serial).
  std::map<const void*, uint64_t> last_by_key;
  std::map<xal_stream_t, uint64_t> last_by_stream;
  xal_comm_t call_comm = nullptr;  // of the collective being checked
  xal_stream_t call_stream = nullptr;
};
thread_local GroupState t_group;

// Why the kept work cannot run: a communicator or stream destroyed since
// its collective was called. Empty when all of it can.
std::string kept_work_problem(const std::vector<Kept>& jobs) {
  for (const Kept& k : jobs) {
    if (!as_comm(k.comm))
      return cat("the communicator ", static_cast<const void*>(k.comm),
                 " of a collective queued in the group was destroyed before xal_group_end");
    if (k.stream && !as_stream(k.stream))
      return cat("the stream ", static_cast<const void*>(k.stream),
                 " of a collective queued in the group was destroyed before xal_group_end");
  }
  return {};
}

// The kept work cut into chains, each in issue order: work that shares a
// key (a rank, whose calls are queued one at a time and in order) or a
// stream (whose work must reach it in issue order, else two communicators
// on the same streams could meet in different orders and wait for each
// other) is in one chain. Chains share neither.
std::vector<std::vector<Kept*>> chains_of(std::vector<Kept>& jobs) {
  std::vector<size_t> parent(jobs.size());
  std::iota(parent.begin(), parent.end(), size_t{0});
  auto root = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  std::map<const void*, size_t> by_key;
  std::map<xal_stream_t, size_t> by_stream;
  for (size_t i = 0; i < jobs.size(); ++i) {
    parent[root(i)] = root(by_key.try_emplace(jobs[i].key, i).first->second);
    if (jobs[i].stream)
      parent[root(i)] = root(by_stream.try_emplace(jobs[i].stream, i).first->second);
  }
  std::vector<std::vector<Kept*>> chains;
  std::map<size_t, size_t> chain_of_root;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto [it, fresh] = chain_of_root.try_emplace(root(i), chains.size());
    if (fresh) chains.emplace_back();
    chains[it->second].push_back(&jobs[i]);
  }
  return chains;
}

// Runs each chain in issue order on a thread of its own, all chains
// concurrently: a backend that runs a collective's host step on the calling
// thread then blocks only its chain. Never on this thread: it is inside the
// backends' groups (their group_end comes after), which would hold its
// native calls until then. The first failure wins. Nothing runs when a communicator or stream of the work is gone, or
// when a thread cannot be started: the ranks of one group are driven from
// this thread, so all of them skip.
xal_status_t run_deferred() {
  std::vector<Kept> jobs;
  jobs.swap(t_group.deferred);
  t_group.last_by_key.clear();
  t_group.last_by_stream.clear();
  if (jobs.empty()) return XAL_SUCCESS;
  if (std::string why = kept_work_problem(jobs); !why.empty())
    return fail(XAL_ERROR_INVALID_HANDLE, cat(why, "; none of the group's collectives ran"));
  std::vector<std::vector<Kept*>> chains = chains_of(jobs);
  std::vector<xal_status_t> status(chains.size(), XAL_SUCCESS);
  std::vector<std::string> message(chains.size());
  auto run_chain = [&](size_t i) {
    for (Kept* k : chains[i]) {
      const xal_status_t s = k->work();
      if (s < 0) {
        xal_error_info_t e{};
        e.struct_size = sizeof e;
        xal_last_error(&e);
        status[i] = s;
        message[i] = e.message;
        return;
      }
    }
  };
  // The threads wait until every one of them has started (or one could
  // not be: they then return without running anything).
  std::mutex mu;
  std::condition_variable cv;
  enum class Start { kWait, kGo, kCancel } start = Start::kWait;
  std::vector<std::thread> threads;
  auto release = [&](Start how) {
    {
      std::lock_guard lock(mu);
      start = how;
    }
    cv.notify_all();
  };
  try {
    for (size_t i = 0; i < chains.size(); ++i)
      threads.emplace_back([&, i] {
        {
          std::unique_lock lock(mu);
          cv.wait(lock, [&] { return start != Start::kWait; });
          if (start == Start::kCancel) return;
        }
        run_chain(i);
      });
  } catch (...) {
    release(Start::kCancel);
    for (auto& t : threads) t.join();
    return fail(XAL_ERROR_OUT_OF_HOST_MEMORY,
                cat("xal_group_end could not start a thread for each of the group's ",
                    chains.size(),
                    " independent chains of collectives; none of the group's collectives ran"));
  }
  release(Start::kGo);
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < chains.size(); ++i)
    if (status[i] < 0) return fail(status[i], cat("a collective queued in the group failed: ", message[i]));
  return XAL_SUCCESS;
}

// Forgets a group this thread opened under an earlier runtime (xal_shutdown
// came in between): its work names objects that are gone. True if there
// was one.
bool drop_group_of_ended_runtime(const Runtime* rt) {
  if (t_group.depth == 0 || t_group.epoch == rt->epoch) return false;
  t_group.depth = 0;
  t_group.deferred.clear();
  t_group.last_by_key.clear();
  t_group.last_by_stream.clear();
  return true;
}

uint32_t timeout_from(const xal_comm_options_t* o) {
  if (o && o->timeout_ms) return o->timeout_ms;
  if (auto v = xal::common::env("XAL_COMM_TIMEOUT_MS")) {
    if (auto n = xal::common::parse_uint(*v); n && *n > 0 && *n <= 0xffffffffu)
      return static_cast<uint32_t>(*n);
    log_message(XAL_LOG_WARNING, cat("XAL_COMM_TIMEOUT_MS='", *v,
                                     "' is not a number of milliseconds from 1 to 4294967295; "
                                     "using the default ", kDefaultTimeoutMs, " ms").c_str());
  }
  return kDefaultTimeoutMs;
}

}  // namespace

namespace xal::core {

uint32_t comm_timeout_from(const xal_comm_options_t* options) { return timeout_from(options); }

xal_status_t create_comm_handles(std::span<DeviceObj* const> devices, uint32_t timeout,
                                 xal_comm_t* out_comms) {
  Runtime* rt = runtime();
  if (!rt) return not_initialized();
  const auto n = static_cast<uint32_t>(devices.size());
  std::set<Backend*> backends;
  for (DeviceObj* d : devices) backends.insert(d->backend);
  std::vector<std::unique_ptr<CommImpl>> impls;
  // One backend with its own library: the native path. Otherwise (mixed
  // backends, or a backend without native collectives) the core's path,
  // which also takes over, with a warning, when the library cannot make
  // the communicator (NOT_SUPPORTED, BACKEND_UNAVAILABLE: see
  // native_failure_can_fall_back).
  // XAL_COMM_FORCE_PATH=hierarchical takes the core's path always (to
  // measure it against the native one); =native refuses the core's path.
  const auto forced = xal::common::env("XAL_COMM_FORCE_PATH");
  if (forced && !forced->empty() && *forced != "hierarchical" && *forced != "native" &&
      *forced != "auto")
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("XAL_COMM_FORCE_PATH '", *forced,
                    "' is none of 'auto', 'native' and 'hierarchical'"));
  const bool force_hier = forced && *forced == "hierarchical";
  const bool force_native = forced && *forced == "native";
  const bool native = !force_hier && backends.size() == 1 && devices[0]->hdr.table->comm_create;
  if (force_native && !native)
    return fail(XAL_ERROR_NOT_SUPPORTED,
                "XAL_COMM_FORCE_PATH=native: the devices are not of one backend with "
                "native collectives");
  std::set<const Backend*> no_native;
  if (native) {
    const xal_status_t s = create_native_comms(devices, timeout, impls);
    if (s && (force_native || !native_failure_can_fall_back(s))) return s;
    if (s) {
      warn_native_fallback(devices[0]->backend);
      no_native.insert(devices[0]->backend);
    }
  }
  if (!native || !no_native.empty()) {
    if (xal_status_t s = create_hierarchical_comms(devices, timeout, impls, no_native); s)
      return s;
  }
  std::vector<CommObj*> made;
  try {
    for (uint32_t i = 0; i < n; ++i) {
      CommObj* c = make_handle<CommObj>(devices[i]->hdr.table);
      made.push_back(c);
      c->device = devices[i];
      c->rank = i;
      c->size = n;
      c->timeout_ms = timeout;
      c->impl = std::move(impls[i]);
    }
    std::lock_guard lock(rt->comms_mu);
    rt->comms.insert(made.begin(), made.end());
  } catch (...) {
    for (CommObj* c : made) destroy_handle(c);
    throw;
  }
  for (uint32_t i = 0; i < n; ++i) out_comms[i] = to_handle<xal_comm_t>(made[i]);
  return XAL_SUCCESS;
}

void note_group_call(xal_comm_t comm, xal_stream_t stream) {
  t_group.call_comm = comm;
  t_group.call_stream = stream;
}

bool defer_to_group_end(const void* key, std::function<xal_status_t()> work) {
  if (t_group.depth == 0) return false;
  // Work on a partition's stream is charged to its compute share when it
  // is queued at xal_group_end, not by the call that kept it.
  if (StreamObj* s = as_stream(t_group.call_stream); s && s->device->state->share) {
    work = [s, w = std::move(work)] { return charge_shared(s, w); };
    note_submit_deferred();
  }
  const uint64_t serial = ++g_kept_serial;
  t_group.deferred.push_back(
      Kept{key, t_group.call_comm, t_group.call_stream, std::move(work), serial});
  t_group.last_by_key[key] = serial;
  if (t_group.call_stream) t_group.last_by_stream[t_group.call_stream] = serial;
  return true;
}

uint64_t last_kept_serial(const void* key) {
  if (t_group.depth == 0) return 0;
  uint64_t last = 0;
  if (auto it = t_group.last_by_key.find(key); it != t_group.last_by_key.end()) last = it->second;
  if (auto it = t_group.last_by_stream.find(t_group.call_stream);
      t_group.call_stream && it != t_group.last_by_stream.end())
    last = std::max(last, it->second);
  return last;
}

}  // namespace xal::core

extern "C" {

// One communicator per device. Thread-safe.
XAL_API xal_status_t xal_comm_create(const xal_device_t* devs, uint32_t n,
                                     const xal_comm_options_t* options,
                                     xal_comm_t* out_comms) {
  return entry("xal_comm_create", [&] {
    Runtime* rt = runtime();
    if (!rt) return not_initialized();
    if (!devs) return null_argument("devs");
    if (!out_comms) return null_argument("out_comms");
    if (n == 0) return fail(XAL_ERROR_INVALID_ARGUMENT, "n is 0 (no devices)");
    if (options) XAL_CHECK_STRUCT(options, "options");
    std::vector<DeviceObj*> devices;
    std::set<DeviceObj*> seen;
    for (uint32_t i = 0; i < n; ++i) {
      DeviceObj* d = as_device(devs[i]);
      if (!d) return bad_handle(devs[i], cat("devs[", i, "]").c_str());
      if (!seen.insert(d).second)
        return fail(XAL_ERROR_INVALID_ARGUMENT,
                    cat("device ", d->index, " is listed twice (devs[", i, "])"));
      devices.push_back(d);
    }
    return create_comm_handles(devices, timeout_from(options), out_comms);
  });
}

XAL_API xal_status_t xal_comm_destroy(xal_comm_t comm) {
  return entry("xal_comm_destroy", [&] {
    Runtime* rt = runtime();
    CommObj* c = as_comm(comm);
    if (!c || !rt) return bad_handle(comm, "comm");
    {
      std::lock_guard lock(rt->comms_mu);
      if (rt->comms.erase(c) == 0) return bad_handle(comm, "comm");
    }
    c->impl.reset();
    destroy_handle(c);
    return XAL_SUCCESS;
  });
}

XAL_API xal_status_t xal_comm_abort(xal_comm_t comm) {
  return entry("xal_comm_abort", [&] {
    CommObj* c = as_comm(comm);
    if (!c) return bad_handle(comm, "comm");
    return c->impl->abort();
  });
}

XAL_API xal_status_t xal_comm_get_async_error(xal_comm_t comm,
                                              xal_status_t* out_error) {
  return entry("xal_comm_get_async_error", [&] {
    CommObj* c = as_comm(comm);
    if (!c) return bad_handle(comm, "comm");
    if (!out_error) return null_argument("out_error");
    return c->impl->async_error(out_error);
  });
}

XAL_API xal_status_t xal_comm_get_info(xal_comm_t comm,
                                       xal_comm_info_t* out_info) {
  return entry("xal_comm_get_info", [&] {
    CommObj* c = as_comm(comm);
    if (!c) return bad_handle(comm, "comm");
    XAL_CHECK_STRUCT(out_info, "out_info");
    out_info->rank = c->rank;
    out_info->size = c->size;
    out_info->device = to_handle<xal_device_t>(c->device);
    out_info->path = c->impl->path();
    out_info->timeout_ms = c->timeout_ms;
    xal::common::copy_string(out_info->description, c->impl->description());
    return XAL_SUCCESS;
  });
}

// Per thread; forwarded to every loaded backend with group entries.
XAL_API xal_status_t xal_group_start(void) {
  return entry("xal_group_start", [&] {
    Runtime* rt = runtime();
    if (!rt) return not_initialized();
    if (drop_group_of_ended_runtime(rt))
      log_message(XAL_LOG_WARNING, "xal_group_start: a group this thread opened before "
                                   "xal_shutdown was never ended; its collectives were dropped");
    for (auto& b : rt->backends)
      if (b->loaded() && b->table->group_start) {
        const xal_status_t s = b->table->group_start(b->instance);
        if (s != XAL_SUCCESS) return fail_backend(b.get(), nullptr, s);
      }
    if (t_group.depth++ == 0) t_group.epoch = rt->epoch;
    trace::group_begin();
    return XAL_SUCCESS;
  });
}

XAL_API xal_status_t xal_group_end(void) {
  return entry("xal_group_end", [&] {
    Runtime* rt = runtime();
    if (!rt) return not_initialized();
    if (drop_group_of_ended_runtime(rt))
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  "xal_group_end: the group was started before xal_shutdown; its collectives "
                  "were dropped");
    if (t_group.depth == 0)
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  "xal_group_end without a matching xal_group_start");
    --t_group.depth;
    xal_status_t first = t_group.depth == 0 ? run_deferred() : XAL_SUCCESS;
    for (auto& b : rt->backends)
      if (b->loaded() && b->table->group_end) {
        const xal_status_t s = b->table->group_end(b->instance);
        if (s != XAL_SUCCESS && first == XAL_SUCCESS)
          first = fail_backend(b.get(), nullptr, s);
      }
    trace::group_end();  // queues the group's traced completions
    return first;
  });
}

}  // extern "C"
