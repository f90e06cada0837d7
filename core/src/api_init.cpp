// xal_init, xal_shutdown, xal_abi_version, backend listing.
#include <cstddef>
#include <mutex>

#include "error.hpp"
#include "host_memory.hpp"
#include "loader.hpp"
#include "partition.hpp"
#include "peer_copy.hpp"
#include "quota.hpp"
#include "quota_shared.hpp"
#include "runtime.hpp"
#include "selector.hpp"
#include "teardown.hpp"
#include "xal_common/strings.hpp"

using namespace xal::core;
using xal::common::copy_string;
using xal::common::env;

namespace {

std::mutex g_init_mu;

// xal_backend_info_t's 1.0 size (up to driver_version): still accepted.
constexpr size_t kBackendInfoFirstSize = XAL_BACKEND_INFO_SIZE_1_0;
static_assert(XAL_BACKEND_INFO_SIZE_1_0 == offsetof(xal_backend_info_t, driver_version) +
                                               sizeof(xal_backend_info_t::driver_version));

std::string option_or_env(const xal_init_options_t* o,
                          const char* xal_init_options_t::*field,
                          const char* var) {
  if (o && o->*field) return o->*field;
  return env(var).value_or("");
}

bool validation_enabled(const xal_init_options_t* o) {
  if (o && o->validation >= 0)
    return o->validation != 0;
  const auto v = env("XAL_VALIDATION");
  if (!v) return true;
  const std::string s = xal::common::to_lower(xal::common::trim(*v));
  if (s == "0" || s == "off" || s == "false" || s == "no") return false;
  if (!(s.empty() || s == "1" || s == "on" || s == "true" || s == "yes"))
    log_message(XAL_LOG_WARNING, cat("XAL_VALIDATION='", *v,
                                     "' is neither on (1, on, true, yes) nor off (0, off, "
                                     "false, no); validation stays on").c_str());
  return true;
}

// Says which parts of the device selector kept nothing (a misspelt
// backend, an index past the end): a silent zero devices is hard to trace.
void warn_unmatched_selector(const Selector& sel, const std::vector<Selector::Started>& started,
                             const std::string& text) {
  for (const std::string& what : sel.unmatched(started))
    log_message(XAL_LOG_WARNING,
                cat("device selector '", text, "': ", what, "; it selects nothing").c_str());
}

// Creates the device handles of a started backend that the selector keeps.
void add_devices(Runtime& rt, Backend& b, const Selector& sel) {
  uint32_t kept = 0;
  for (uint32_t i = 0; i < b.device_count; ++i) {
    const std::string target = plugin_name_of_file(b.argument);
    if (!sel.selects({b.name, b.short_name, target}, i)) continue;
    xal_bdevice_t* native = nullptr;
    const xal_status_t s = b.table->device_get(b.instance, i, &native);
    if (s != XAL_SUCCESS || !native) {
      int64_t code = 0;
      std::string vn, msg;
      take_pending(s, &code, &vn, &msg);
      log_message(XAL_LOG_WARNING,
                  cat("backend ", b.name, ": device_get(", i, ") failed: ",
                      xal_status_name(s), " ", msg).c_str());
      continue;
    }
    DeviceObj* d = make_handle<DeviceObj>(b.table.get());
    d->backend = &b;
    d->native = native;
    d->index = static_cast<uint32_t>(rt.devices.size());
    d->backend_index = i;
    try {
      d->state = std::make_unique<DeviceState>();
      rt.devices.push_back(d);
    } catch (...) {
      destroy_handle(d);
      throw;
    }
    ++kept;
  }
  b.device_count = kept;
}

xal_status_t do_init(const xal_init_options_t* options, int64_t t0) {
  std::lock_guard lock(g_init_mu);
  if (runtime())
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                "xal is already initialised: call xal_shutdown before "
                "initialising again");
  if (options && options->struct_size < sizeof(xal_init_options_t))
    return bad_struct(options, options->struct_size, sizeof(*options),
                      "options");
  if (options && options->flags != 0)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("options->flags is reserved and must be 0, not ", hex(options->flags)));
  if (options && (options->validation < -1 || options->validation > 1))
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("options->validation must be -1 (XAL_VALIDATION), 0 (off) or 1 (on), not ",
                    options->validation));
  const std::string selector_text = option_or_env(
      options, &xal_init_options_t::device_selector, "XAL_DEVICE_SELECTOR");
  std::string error;
  const auto selector = Selector::parse(selector_text, &error);
  if (!selector)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("malformed device selector '", selector_text, "': ", error));
  const std::string limit_text = env("XAL_MEMORY_LIMIT").value_or("");
  const auto limits = parse_memory_limits(limit_text, &error);
  if (!limits)
    return fail(XAL_ERROR_INVALID_ARGUMENT,
                cat("malformed XAL_MEMORY_LIMIT '", limit_text, "': ", error));

  auto rt = std::make_unique<Runtime>();
  rt->validation = validation_enabled(options);
  g_building = rt.get();
  try {
    rt->search_dirs = search_dirs(option_or_env(
        options, &xal_init_options_t::backend_path, "XAL_BACKEND_PATH"));
    const auto& dirs = rt->search_dirs;
    const auto requests = plan_backends(
        option_or_env(options, &xal_init_options_t::backends, "XAL_BACKENDS"),
        dirs);
    std::vector<Selector::Started> started;
    for (const auto& req : requests) {
      auto b = std::make_unique<Backend>();
      b->argument = req.argument;
      Backend& ref = *b;
      rt->backends.push_back(std::move(b));
      if (!open_plugin(req.plugin, dirs, ref) || !start_backend(ref)) {
        close_backend(ref);
        ref.table.reset();
        log_message(XAL_LOG_INFO,
                    cat("backend ", ref.name, " not loaded: ", ref.reason).c_str());
        continue;
      }
      started.push_back({{ref.name, ref.short_name, plugin_name_of_file(ref.argument)},
                         ref.device_count});  // all of them, before the selector's choice
      add_devices(*rt, ref, *selector);
    }
    warn_unmatched_selector(*selector, started, selector_text);
    apply_memory_limits(*rt, *limits);
    apply_partition_config(*rt, env("XAL_PARTITIONS").value_or(""));
    shared_quota_open(*rt);
    rt->host = std::make_unique<HostMemory>(*rt);
    rt->peer = std::make_unique<PeerEngine>(*rt);
  } catch (...) {
    g_building = nullptr;
    destroy_runtime(rt.release());
    shared_quota_close();
    throw;
  }
  g_building = nullptr;
  trace::start(t0);  // XAL_TRACE: on from here to xal_shutdown
  publish_runtime(rt.release());
  return XAL_SUCCESS;
}

}  // namespace

extern "C" {

// Loads backends and enumerates devices. Serialised against itself.
XAL_API xal_status_t xal_init(const xal_init_options_t* options) {
  const int64_t t0 = trace::now_ns();
  const xal_status_t st = entry("xal_init", [&] { return do_init(options, t0); });
  if (st == XAL_SUCCESS && trace_on()) trace::record_call("xal_init", t0, st);
  return st;
}

// Releases everything; handles become invalid. Serialised against xal_init.
// The runtime is unpublished first and torn down once the handle-free calls
// already running on it returned (RuntimeHold): handle-free calls racing it
// get NOT_INITIALIZED, never a half-destroyed runtime. With XAL_TRACE, then
// writes the trace.
XAL_API xal_status_t xal_shutdown(void) {
  uint64_t trace_session = 0;
  const xal_status_t st = entry("xal_shutdown", [&] {
    std::lock_guard lock(g_init_mu);
    if (!runtime()) return not_initialized();
    trace_session = trace::session();
    destroy_runtime(unpublish_runtime());
    shared_quota_close();
    return XAL_SUCCESS;
  });
  if (trace_session) trace::finish(trace_session);
  return st;
}

// Never fails; no state.
XAL_API uint32_t xal_abi_version(void) { return XAL_ABI_VERSION; }

// Number of backends considered. Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_backend_count(uint32_t* out_count) {
  return entry("xal_backend_count", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!out_count) return null_argument("out_count");
    *out_count = static_cast<uint32_t>(rt->backends.size());
    return XAL_SUCCESS;
  });
}

// Fills the caller's struct. Thread-safe, also against xal_shutdown.
XAL_API xal_status_t xal_backend_get_info(uint32_t index,
                                          xal_backend_info_t* out_info) {
  return entry("xal_backend_get_info", [&] {
    const RuntimeHold hold;
    Runtime* rt = hold.get();
    if (!rt) return not_initialized();
    if (!struct_ok_from(out_info, kBackendInfoFirstSize))
      return bad_struct(out_info, out_info ? out_info->struct_size : 0, kBackendInfoFirstSize,
                        "out_info");
    if (index >= rt->backends.size())
      return fail(XAL_ERROR_INVALID_ARGUMENT,
                  cat("backend index ", index, " is past the end (",
                      rt->backends.size(), " backends)"));
    const Backend& b = *rt->backends[index];
    xal_backend_info_t info{};
    info.struct_size = sizeof info;
    copy_string(info.name, b.name);
    copy_string(info.version, b.version);
    copy_string(info.path, b.path);
    info.state = b.state;
    info.status = b.status;
    copy_string(info.reason, b.reason);
    info.abi_version = b.abi_version;
    info.device_count = b.loaded() ? b.device_count : 0;
    info.flags = b.flags;
    copy_string(info.driver_version, b.driver_version);
    copy_string(info.note, b.note);
    copy_out_struct(out_info, info);  // only what the caller's version holds
    return XAL_SUCCESS;
  });
}

}  // extern "C"
